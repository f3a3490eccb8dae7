// Anthropic Message Batches (room h-cost, SPEC section 18): scoring calls submitted as one batch
// through @anthropic-ai/sdk's messages.batches (create, retrieve, results, cancel), priced at half the
// live rate (cache reads priced as such). Each request is built as the live call builds it (forced
// tool, cached system prompt); each result is read as the live call reads its answer. This file is
// the provider part only: submitting, polling, collecting and cancelling one batch. Which rows go in
// and what is stored of them belong to the batch runner.
import Anthropic from '@anthropic-ai/sdk';
import { costUsd, type PriceTable, type PricedProvider } from './cost.ts';
import type { ModelUsage, StructuredAnswer, StructuredCall } from './model.ts';
import { thinkingShape } from './thinking-form.ts';

/** Anthropic bills every token of a batch request, cache reads and writes included, at half the live rate. */
export const BATCH_PRICE_MULTIPLE = 0.5;

export type ProviderBatchStatus = 'in_progress' | 'canceling' | 'ended';

export interface ProviderBatch {
  id: string;
  status: ProviderBatchStatus;
  counts: { processing: number; succeeded: number; errored: number; canceled: number; expired: number };
}

/** One request's outcome: an answer (to validate as a live answer is), or why there is none. */
export type BatchOutcome =
  | { custom_id: string; ok: true; answer: StructuredAnswer }
  | { custom_id: string; ok: false; kind: 'errored' | 'expired' | 'canceled' | 'malformed'; message: string; usage?: ModelUsage };

/** The Messages API parameters of a scoring call, as AnthropicJudgeModel sends them live (forced tool; the system prompt cached). */
export function batchParams(call: StructuredCall): Anthropic.MessageCreateParamsNonStreaming {
  const shape = thinkingShape(call.model, call.tool.name, call.maxTokens, call.thinkingBudget);
  return {
    model: call.model,
    system: call.cacheSystem ? [{ type: 'text', text: call.system, cache_control: { type: 'ephemeral' } }] : call.system,
    messages: [{ role: 'user', content: call.prompt }],
    tools: [{ name: call.tool.name, description: call.tool.description, input_schema: call.tool.input_schema as Anthropic.Tool.InputSchema }],
    ...shape,
  };
}

/** USD of one batch result: the live price of its tokens (cache reads and writes at their rates), halved. */
export function batchCostUsd(model: string, usage: ModelUsage, prices: PriceTable, provider: PricedProvider = 'anthropic'): number | null {
  const live = costUsd(model, usage, prices, provider);
  return live === null ? null : Math.round(live * BATCH_PRICE_MULTIPLE * 1e9) / 1e9;
}

const tokens = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.round(n) : 0);

/** Usage as the live call records it: input_tokens counts every prompt token, the cached parts named. */
export function usageOf(message: Pick<Anthropic.Message, 'usage'>): ModelUsage {
  const read = tokens(message.usage?.cache_read_input_tokens);
  const write = tokens(message.usage?.cache_creation_input_tokens);
  return {
    input_tokens: tokens(message.usage?.input_tokens) + read + write,
    output_tokens: tokens(message.usage?.output_tokens),
    cache_read_tokens: read,
    cache_write_tokens: write,
  };
}

const toBatch = (b: Anthropic.Messages.MessageBatch): ProviderBatch => ({ id: b.id, status: b.processing_status, counts: { ...b.request_counts } });

export class AnthropicBatchClient {
  private readonly client: Anthropic;

  constructor(opts: { apiKey: string; baseUrl?: string | null; timeoutMs?: number }) {
    this.client = new Anthropic({ apiKey: opts.apiKey, baseURL: opts.baseUrl ?? null, maxRetries: 2, timeout: opts.timeoutMs ?? 60_000 });
  }

  /** Submits every request in one batch (at most 100,000); the answer's id is what to keep, to poll after a restart. */
  async submit(requests: Array<{ custom_id: string; call: StructuredCall }>): Promise<ProviderBatch> {
    if (!requests.length || requests.length > 100_000) throw new Error(`a message batch holds 1 to 100,000 requests, not ${requests.length}`);
    return toBatch(await this.client.messages.batches.create({ requests: requests.map((r) => ({ custom_id: r.custom_id, params: batchParams(r.call) })) }));
  }

  async status(id: string): Promise<ProviderBatch> {
    return toBatch(await this.client.messages.batches.retrieve(id));
  }

  async cancel(id: string): Promise<ProviderBatch> {
    return toBatch(await this.client.messages.batches.cancel(id));
  }

  /** The outcomes of an ended batch, streamed from its results file (JSONL); `toolName` is the answer tool every request forced. */
  async *results(id: string, toolName: string): AsyncGenerator<BatchOutcome> {
    for await (const line of await this.client.messages.batches.results(id)) {
      const r = line.result;
      if (r.type === 'succeeded') {
        const usage = usageOf(r.message);
        const block = r.message.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use' && b.name === toolName);
        if (block) yield { custom_id: line.custom_id, ok: true, answer: { input: block.input, model: r.message.model, usage } };
        else
          yield {
            custom_id: line.custom_id,
            ok: false,
            kind: 'malformed',
            message: `the judge model answered without calling the tool ${toolName} (stop_reason ${r.message.stop_reason ?? 'unknown'})`,
            usage,
          };
      } else if (r.type === 'errored') {
        yield {
          custom_id: line.custom_id,
          ok: false,
          kind: 'errored',
          message: `${r.error.error?.type ?? 'error'}: ${r.error.error?.message ?? 'the request failed in the batch'}`,
        };
      } else {
        yield {
          custom_id: line.custom_id,
          ok: false,
          kind: r.type,
          message: r.type === 'expired' ? 'the batch expired (24 h) before this request ran' : 'the batch was cancelled before this request ran',
        };
      }
    }
  }
}
