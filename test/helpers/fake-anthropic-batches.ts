// A fake of Anthropic's Message Batches API (room h-cost) on 127.0.0.1, spoken to by the real SDK:
// create (POST /v1/messages/batches), retrieve (in_progress for `pollsUntilEnded` reads, then ended
// with a results_url), results (JSONL), cancel (canceling, then ended with the requests not run
// canceled). Each request's result comes from a responder: a tool answer, an error or expiry. The
// prompt cache is reported as the API does: the first request with a given system prompt writes it
// (cache_creation_input_tokens), every later one reads it (cache_read_input_tokens), ~4 characters a token.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type BatchResult = { kind: 'succeeded'; input: unknown; output_tokens?: number } | { kind: 'errored'; message?: string } | { kind: 'expired' } | { kind: 'no_tool' };

interface FakeBatchRequest {
  custom_id: string;
  params: any;
}
interface Batch {
  id: string;
  requests: FakeBatchRequest[];
  reads: number;
  status: 'in_progress' | 'canceling' | 'ended';
  canceled: boolean;
  created_at: string;
  results?: string;
}

export interface FakeAnthropicBatches {
  url: string;
  /** Batches created, in order (a second create of the same rows would show here). */
  readonly batches: Batch[];
  /** Result of one request (default: a tool answer with score 0.8). */
  respondWith(responder: (req: FakeBatchRequest, index: number) => BatchResult): void;
  /** Retrieves answered in_progress before a batch ends (default 2). */
  pollsUntilEnded: number;
  close(): Promise<void>;
}

const tokensOf = (value: unknown) => Math.max(1, Math.ceil((typeof value === 'string' ? value : JSON.stringify(value ?? '')).length / 4));
const systemText = (system: unknown) => (Array.isArray(system) ? system.map((b: any) => b.text ?? '').join('') : String(system ?? ''));

export async function startFakeAnthropicBatches(): Promise<FakeAnthropicBatches> {
  const batches: Batch[] = [];
  const cached = new Set<string>();
  let responder = (_req: FakeBatchRequest, _i: number): BatchResult => ({ kind: 'succeeded', input: { justification: 'Batch answer.', score: 0.8 } });
  let serial = 0;

  const counts = (b: Batch) => {
    const lines = b.results
      ? b.results
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l).result.type as string)
      : [];
    const n = (t: string) => lines.filter((x) => x === t).length;
    return { processing: b.status === 'ended' ? 0 : b.requests.length, succeeded: n('succeeded'), errored: n('errored'), canceled: n('canceled'), expired: n('expired') };
  };
  const wire = (b: Batch, url: string) => ({
    id: b.id,
    type: 'message_batch',
    processing_status: b.status,
    request_counts: counts(b),
    created_at: b.created_at,
    expires_at: new Date(Date.parse(b.created_at) + 86_400_000).toISOString(),
    ended_at: b.status === 'ended' ? new Date().toISOString() : null,
    cancel_initiated_at: b.canceled ? new Date().toISOString() : null,
    archived_at: null,
    results_url: b.status === 'ended' ? `${url}/v1/messages/batches/${b.id}/results` : null,
  });
  const end = (b: Batch) => {
    b.status = 'ended';
    b.results =
      b.requests
        .map((req, i) => {
          if (b.canceled) return { custom_id: req.custom_id, result: { type: 'canceled' } };
          const r = responder(req, i);
          if (r.kind === 'errored')
            return {
              custom_id: req.custom_id,
              result: { type: 'errored', error: { type: 'error', error: { type: 'invalid_request_error', message: r.message ?? 'bad request' } } },
            };
          if (r.kind === 'expired') return { custom_id: req.custom_id, result: { type: 'expired' } };
          const system = systemText(req.params.system);
          const prefix = tokensOf(system) + tokensOf(req.params.tools);
          const hit = cached.has(system);
          cached.add(system);
          const usage = {
            input_tokens: tokensOf(req.params.messages),
            output_tokens: r.kind === 'succeeded' ? (r.output_tokens ?? 60) : 20,
            cache_creation_input_tokens: hit ? 0 : prefix,
            cache_read_input_tokens: hit ? prefix : 0,
          };
          const content =
            r.kind === 'succeeded' ? [{ type: 'tool_use', id: `toolu_${i}`, name: req.params.tools?.[0]?.name ?? 'score', input: r.input }] : [{ type: 'text', text: 'No tool.' }];
          const message = {
            id: `msg_${b.id}_${i}`,
            type: 'message',
            role: 'assistant',
            model: req.params.model,
            content,
            stop_reason: r.kind === 'succeeded' ? 'tool_use' : 'end_turn',
            stop_sequence: null,
            usage,
          };
          return { custom_id: req.custom_id, result: { type: 'succeeded', message } };
        })
        .map((l) => JSON.stringify(l))
        .join('\n') + '\n';
  };

  const fake: FakeAnthropicBatches = {
    url: '',
    batches,
    pollsUntilEnded: 2,
    respondWith: (r) => (responder = r),
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };

  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const send = (status: number, value: unknown, type = 'application/json') => {
        res.writeHead(status, { 'content-type': type });
        res.end(typeof value === 'string' ? value : JSON.stringify(value));
      };
      if (!req.headers['x-api-key'] && !req.headers.authorization)
        return send(401, { type: 'error', error: { type: 'authentication_error', message: 'x-api-key header is required' } });
      const path = (req.url ?? '').split('?')[0];
      const m = /^\/v1\/messages\/batches(?:\/([^/]+))?(?:\/(results|cancel))?$/.exec(path);
      if (!m) return send(404, { type: 'error', error: { type: 'not_found_error', message: `no route ${path}` } });
      const [, id, action] = m;
      if (req.method === 'POST' && !id) {
        const parsed = JSON.parse(body);
        const b: Batch = { id: `msgbatch_${++serial}`, requests: parsed.requests, reads: 0, status: 'in_progress', canceled: false, created_at: new Date().toISOString() };
        batches.push(b);
        return send(200, wire(b, fake.url));
      }
      const b = batches.find((x) => x.id === id);
      if (!b) return send(404, { type: 'error', error: { type: 'not_found_error', message: `no batch ${id}` } });
      if (req.method === 'GET' && !action) {
        if (b.status === 'canceling') end(b);
        else if (b.status === 'in_progress' && ++b.reads > fake.pollsUntilEnded) end(b);
        return send(200, wire(b, fake.url));
      }
      if (req.method === 'POST' && action === 'cancel') {
        if (b.status === 'in_progress') {
          b.canceled = true;
          b.status = 'canceling';
        }
        return send(200, wire(b, fake.url));
      }
      if (req.method === 'GET' && action === 'results') {
        if (b.status !== 'ended') return send(400, { type: 'error', error: { type: 'invalid_request_error', message: 'batch has not ended' } });
        return send(200, b.results!, 'application/binary');
      }
      send(405, { type: 'error', error: { type: 'invalid_request_error', message: 'method not allowed' } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}
