// The OpenAI Batch API (room h-cost, SPEC section 18) through the openai SDK's files and batches:
// the scoring calls as one JSONL input file (POST /v1/chat/completions each, a forced function call
// as the live call sends it), a batch over it, polled until it ends, its output and error files read
// back line by line; half the live price. Only for a registered model whose base URL serves the Batch
// API (OpenAI's own). The provider part only: which rows go in belongs to the batch runner.
import OpenAI, { toFile } from 'openai';
import type { ModelUsage, StructuredCall } from './model.ts';
import { parseJsonReply } from './json-answer.ts';
import type { BatchOutcome, ProviderBatch, ProviderBatchStatus } from './anthropic-batch.ts';

/** The Chat Completions body of a scoring call, as OpenAIJudgeModel sends it live with the tool strategy. */
export function chatBatchBody(call: StructuredCall): OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming {
  return {
    model: call.model,
    messages: [
      { role: 'system', content: call.system },
      { role: 'user', content: call.prompt },
    ],
    max_completion_tokens: call.maxTokens,
    temperature: call.temperature ?? 0,
    tools: [{ type: 'function', function: { name: call.tool.name, description: call.tool.description, parameters: call.tool.input_schema } }],
    tool_choice: { type: 'function', function: { name: call.tool.name } },
    parallel_tool_calls: false,
  };
}

const STATUS: Record<OpenAI.Batches.Batch['status'], ProviderBatchStatus> = {
  validating: 'in_progress',
  in_progress: 'in_progress',
  finalizing: 'in_progress',
  cancelling: 'canceling',
  completed: 'ended',
  failed: 'ended',
  expired: 'ended',
  cancelled: 'ended',
};

const tokens = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.round(n) : 0);

const toBatch = (b: OpenAI.Batches.Batch): ProviderBatch & { provider_status: string } => {
  const c = b.request_counts ?? { total: 0, completed: 0, failed: 0 };
  const ended = STATUS[b.status] === 'ended';
  return {
    id: b.id,
    status: STATUS[b.status],
    provider_status: b.status,
    counts: {
      processing: ended ? 0 : c.total - c.completed - c.failed,
      succeeded: c.completed,
      errored: c.failed,
      canceled: b.status === 'cancelled' ? c.total - c.completed - c.failed : 0,
      expired: b.status === 'expired' ? c.total - c.completed - c.failed : 0,
    },
  };
};

export class OpenAIBatchClient {
  private readonly client: OpenAI;

  constructor(opts: { apiKey: string; baseUrl?: string | null; timeoutMs?: number }) {
    this.client = new OpenAI({ apiKey: opts.apiKey, baseURL: opts.baseUrl ?? undefined, maxRetries: 2, timeout: opts.timeoutMs ?? 60_000 });
  }

  async submit(requests: Array<{ custom_id: string; call: StructuredCall }>) {
    if (!requests.length || requests.length > 50_000) throw new Error(`an OpenAI batch holds 1 to 50,000 requests, not ${requests.length}`);
    const jsonl = requests.map((r) => JSON.stringify({ custom_id: r.custom_id, method: 'POST', url: '/v1/chat/completions', body: chatBatchBody(r.call) })).join('\n') + '\n';
    const file = await this.client.files.create({ file: await toFile(Buffer.from(jsonl), 'tribunal-batch.jsonl'), purpose: 'batch' });
    return toBatch(await this.client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }));
  }

  async status(id: string) {
    return toBatch(await this.client.batches.retrieve(id));
  }

  async cancel(id: string) {
    return toBatch(await this.client.batches.cancel(id));
  }

  /**
   * The outcomes of an ended batch: every line of its output file (answers, and requests the
   * provider answered with an error status) and of its error file; requests in neither did not run
   * (the batch expired or was cancelled first).
   */
  async *results(id: string, customIds: string[], toolName: string): AsyncGenerator<BatchOutcome> {
    const batch = await this.client.batches.retrieve(id);
    const seen = new Set<string>();
    for (const fileId of [batch.output_file_id, batch.error_file_id]) {
      if (!fileId) continue;
      const text = await (await this.client.files.content(fileId)).text();
      for (const line of text.split('\n')) {
        if (!line.trim()) continue;
        const row = JSON.parse(line) as { custom_id: string; response?: { status_code: number; body: any } | null; error?: { code?: string; message?: string } | null };
        seen.add(row.custom_id);
        yield outcomeOf(row, toolName);
      }
    }
    const kind = batch.status === 'cancelled' ? ('canceled' as const) : ('expired' as const);
    for (const custom_id of customIds)
      if (!seen.has(custom_id))
        yield { custom_id, ok: false, kind, message: kind === 'expired' ? 'the batch expired (24 h) before this request ran' : 'the batch was cancelled before this request ran' };
  }
}

function outcomeOf(
  row: { custom_id: string; response?: { status_code: number; body: any } | null; error?: { code?: string; message?: string } | null },
  toolName: string,
): BatchOutcome {
  const body = row.response?.body;
  if (row.error || !row.response || row.response.status_code >= 400) {
    const err = row.error ?? body?.error;
    return {
      custom_id: row.custom_id,
      ok: false,
      kind: 'errored',
      message: `${err?.code ?? err?.type ?? `status ${row.response?.status_code ?? '?'}`}: ${err?.message ?? 'the request failed in the batch'}`,
    };
  }
  const usage: ModelUsage = {
    input_tokens: tokens(body?.usage?.prompt_tokens),
    output_tokens: tokens(body?.usage?.completion_tokens),
    cache_read_tokens: tokens(body?.usage?.prompt_tokens_details?.cached_tokens),
  };
  const call = body?.choices?.[0]?.message?.tool_calls?.find((c: any) => c.type === 'function' && c.function?.name === toolName);
  const input = call ? parseJsonReply(call.function.arguments) : undefined;
  if (!input) return { custom_id: row.custom_id, ok: false, kind: 'malformed', message: `the judge model answered without calling the function ${toolName}`, usage };
  return { custom_id: row.custom_id, ok: true, answer: { input, model: typeof body.model === 'string' ? body.model : '', usage, temperature: 0 } };
}
