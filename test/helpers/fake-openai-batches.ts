// A fake of the OpenAI Batch API (room h-cost) on 127.0.0.1 for the real openai SDK: file upload
// (multipart, purpose batch), batch create / retrieve (validating -> in_progress for
// `pollsUntilEnded` reads -> completed, or expired when a request is left unrun) / cancel, and file
// content (output and error JSONL). Each request's line comes from a responder; automatic prefix
// caching is reported as OpenAI does (prompt_tokens_details.cached_tokens, ~4 characters a token).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type OpenAIBatchResult = { kind: 'ok'; args: unknown } | { kind: 'error'; status: number; message?: string } | { kind: 'not_run' } | { kind: 'no_tool' };

interface Line {
  custom_id: string;
  body: any;
}
interface Batch {
  id: string;
  input_file_id: string;
  status: string;
  reads: number;
  output_file_id: string | null;
  error_file_id: string | null;
  counts: { total: number; completed: number; failed: number };
}

export interface FakeOpenAIBatches {
  url: string;
  readonly files: Map<string, string>;
  readonly batches: Batch[];
  pollsUntilEnded: number;
  respondWith(responder: (line: Line, index: number) => OpenAIBatchResult): void;
  close(): Promise<void>;
}

const tokensOf = (s: string) => Math.max(1, Math.ceil(s.length / 4));

export async function startFakeOpenAIBatches(): Promise<FakeOpenAIBatches> {
  const files = new Map<string, string>();
  const batches: Batch[] = [];
  const seenPrefixes = new Set<string>();
  let serial = 0;
  let responder = (_l: Line, _i: number): OpenAIBatchResult => ({ kind: 'ok', args: { justification: 'Batch answer.', score: 0.7 } });

  const finish = (b: Batch, cancelled: boolean) => {
    const lines: Line[] = files
      .get(b.input_file_id)!
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const out: string[] = [];
    const errs: string[] = [];
    let unrun = 0;
    lines.forEach((line, i) => {
      const r: OpenAIBatchResult = cancelled ? { kind: 'not_run' } : responder(line, i);
      if (r.kind === 'not_run') return void unrun++;
      if (r.kind === 'error') {
        b.counts.failed++;
        return void errs.push(
          JSON.stringify({
            id: `req_${i}`,
            custom_id: line.custom_id,
            response: {
              status_code: r.status,
              request_id: `r${i}`,
              body: { error: { message: r.message ?? 'bad request', type: 'invalid_request_error', code: 'invalid_request' } },
            },
            error: null,
          }),
        );
      }
      b.counts.completed++;
      const system = line.body.messages[0].content as string;
      const prompt = tokensOf(JSON.stringify(line.body.messages)) + tokensOf(JSON.stringify(line.body.tools ?? ''));
      const cached = seenPrefixes.has(system) ? Math.floor(tokensOf(system) / 128) * 128 : 0;
      seenPrefixes.add(system);
      const message =
        r.kind === 'ok'
          ? {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: line.body.tools[0].function.name, arguments: JSON.stringify(r.args) } }],
            }
          : { role: 'assistant', content: 'No function.' };
      const body = {
        id: `chatcmpl_${i}`,
        object: 'chat.completion',
        model: line.body.model,
        choices: [{ index: 0, message, finish_reason: r.kind === 'ok' ? 'tool_calls' : 'stop' }],
        usage: { prompt_tokens: prompt, completion_tokens: 50, total_tokens: prompt + 50, prompt_tokens_details: { cached_tokens: cached } },
      };
      out.push(JSON.stringify({ id: `req_${i}`, custom_id: line.custom_id, response: { status_code: 200, request_id: `r${i}`, body }, error: null }));
    });
    const put = (rows: string[]) => {
      if (!rows.length) return null;
      const id = `file-out-${++serial}`;
      files.set(id, rows.join('\n') + '\n');
      return id;
    };
    b.output_file_id = put(out);
    b.error_file_id = put(errs);
    b.status = cancelled ? 'cancelled' : unrun ? 'expired' : 'completed';
  };
  const wire = (b: Batch) => ({
    id: b.id,
    object: 'batch',
    endpoint: '/v1/chat/completions',
    input_file_id: b.input_file_id,
    completion_window: '24h',
    status: b.status,
    output_file_id: b.output_file_id,
    error_file_id: b.error_file_id,
    created_at: 1,
    request_counts: b.counts,
  });

  const fake: FakeOpenAIBatches = {
    url: '',
    files,
    batches,
    pollsUntilEnded: 2,
    respondWith: (r) => (responder = r),
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d) => chunks.push(d));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const send = (status: number, value: unknown, type = 'application/json') => {
        res.writeHead(status, { 'content-type': type });
        res.end(typeof value === 'string' ? value : JSON.stringify(value));
      };
      if (!String(req.headers.authorization ?? '').startsWith('Bearer '))
        return send(401, { error: { message: 'no key', type: 'invalid_request_error', code: 'invalid_api_key' } });
      const path = (req.url ?? '').split('?')[0].replace(/^\/v1/, '');
      let m: RegExpExecArray | null;
      if (req.method === 'POST' && path === '/files') {
        // The multipart part holding the file: its JSONL lines.
        const jsonl =
          raw
            .split(/\r?\n/)
            .filter((l) => l.startsWith('{"custom_id"'))
            .join('\n') + '\n';
        const id = `file-in-${++serial}`;
        files.set(id, jsonl);
        return send(200, { id, object: 'file', bytes: jsonl.length, created_at: 1, filename: 'tribunal-batch.jsonl', purpose: 'batch', status: 'processed' });
      }
      if ((m = /^\/files\/([^/]+)\/content$/.exec(path)) && req.method === 'GET') {
        const text = files.get(m[1]);
        return text === undefined ? send(404, { error: { message: 'no file', type: 'invalid_request_error' } }) : send(200, text, 'application/octet-stream');
      }
      // GET /batches (a page of batches): what the server asks to learn that a base URL serves the Batch API.
      if (req.method === 'GET' && path === '/batches') return send(200, { object: 'list', data: batches.map(wire), has_more: false, first_id: null, last_id: null });
      if (req.method === 'POST' && path === '/batches') {
        const body = JSON.parse(raw);
        const total = (files.get(body.input_file_id) ?? '').trim().split('\n').filter(Boolean).length;
        const b: Batch = {
          id: `batch_${++serial}`,
          input_file_id: body.input_file_id,
          status: 'validating',
          reads: 0,
          output_file_id: null,
          error_file_id: null,
          counts: { total, completed: 0, failed: 0 },
        };
        batches.push(b);
        return send(200, wire(b));
      }
      if ((m = /^\/batches\/([^/]+)(\/cancel)?$/.exec(path))) {
        const b = batches.find((x) => x.id === m![1]);
        if (!b) return send(404, { error: { message: 'no batch', type: 'invalid_request_error' } });
        if (m[2] && req.method === 'POST') {
          if (['validating', 'in_progress'].includes(b.status)) b.status = 'cancelling';
          return send(200, wire(b));
        }
        if (b.status === 'cancelling') finish(b, true);
        else if (['validating', 'in_progress'].includes(b.status)) {
          b.reads++;
          if (b.reads > fake.pollsUntilEnded) finish(b, false);
          else b.status = 'in_progress';
        }
        return send(200, wire(b));
      }
      send(404, { error: { message: `no route ${req.method} ${path}`, type: 'invalid_request_error' } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return fake;
}
