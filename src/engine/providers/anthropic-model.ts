// The judge model on Anthropic's Messages API through @anthropic-ai/sdk. One call is one HTTP
// attempt: the SDK's own retries are off, because retries, backoff, the per-call timeout and the
// server-wide concurrency limit live in resilient-model.ts, shared by scoring and generation.
import Anthropic from '@anthropic-ai/sdk';
import { MessagesEndpoint } from './messages-request.ts';
import type { JudgeModel, StructuredAnswer, StructuredCall } from './model.ts';
import { kindForStatus, ModelCallError, parseRetryAfter } from './model-errors.ts';
import { thinkingGeneration, thinkingShape } from './thinking-form.ts';
import { jsonInstruction, parseJsonReply } from './json-answer.ts';
import { PROBE_PROMPT, PROBE_SYSTEM, PROBE_TOOL, probeStep } from './probe.ts';
import type { ModelCapabilities } from '../../schemas.ts';
import type { AddressPolicy } from './address-policy.ts';
import { refusalOf } from './upstream-text.ts';
import { keepJson } from './kept-json.ts';

export interface AnthropicModelOptions {
  /** ANTHROPIC_API_KEY; without it the model is not configured and every call fails with `auth`. */
  apiKey?: string;
  /** ANTHROPIC_BASE_URL; default https://api.anthropic.com. */
  baseUrl?: string;
  /** A backstop per HTTP attempt; the retry layer applies the configured timeout itself. */
  timeoutMs?: number;
  /** A registered model's SSRF policy (address-policy.ts); the server's own model has none. */
  policy?: AddressPolicy;
}

export const NOT_CONFIGURED_MESSAGE =
  'No judge model is configured on this server: set ANTHROPIC_API_KEY (and optionally TRIBUNAL_MODEL for the model name, default claude-sonnet-5-5, and ANTHROPIC_BASE_URL for a compatible endpoint), then restart the server.';

/**
 * The user turn: the prompt text, after the run's attachments (h-attach) as the Messages API's own
 * blocks: `image` for PNG, JPEG and WebP, `document` for PDF, both base64. Without attachments the
 * content stays a plain string, the same bytes as before.
 */
function userContent(request: StructuredCall, text: string): string | Anthropic.ContentBlockParam[] {
  if (!request.attachments?.length) return text;
  const blocks: Anthropic.ContentBlockParam[] = request.attachments.map((a) =>
    a.content_type === 'application/pdf'
      ? { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: a.data } }
      : { type: 'image', source: { type: 'base64', media_type: a.content_type, data: a.data } },
  );
  return [...blocks, { type: 'text', text }];
}

// The system block and the tool are the same on every call of one evaluator version: each is built
// and serialized once (kept-json.ts), not on every call. The system prompt of a version is one
// string kept by scoring (engine/system-prompts.ts), so the lookup hashes no text.
const SYSTEM_BLOCKS_KEPT = 1024;
const systemBlocks = new Map<string, Anthropic.TextBlockParam[]>();
function cachedSystem(text: string): Anthropic.TextBlockParam[] {
  let blocks = systemBlocks.get(text);
  if (!blocks) {
    if (systemBlocks.size >= SYSTEM_BLOCKS_KEPT) systemBlocks.delete(systemBlocks.keys().next().value!);
    blocks = keepJson([{ type: 'text' as const, text, cache_control: { type: 'ephemeral' as const } }]);
    systemBlocks.set(text, blocks);
  }
  return blocks;
}

const toolParams = new WeakMap<StructuredCall['tool'], Anthropic.Tool[]>();
function toolsParam(tool: StructuredCall['tool']): Anthropic.Tool[] {
  let tools = toolParams.get(tool);
  if (!tools) {
    tools = keepJson([{ name: tool.name, description: tool.description, input_schema: tool.input_schema as Anthropic.Tool.InputSchema }]);
    toolParams.set(tool, tools);
  }
  return tools;
}

/** A token count the API reported: a positive finite number, rounded; anything else is 0. */
const tokens = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.round(n) : 0);

export class AnthropicJudgeModel implements JudgeModel {
  readonly configured: boolean;
  readonly appliesTimeout = true;
  private readonly client: MessagesEndpoint | null;

  constructor(opts: AnthropicModelOptions) {
    this.configured = Boolean(opts.apiKey);
    // One request per call, without the SDK client's layers; its errors are the SDK's (messages-request.ts).
    this.client = opts.apiKey ? new MessagesEndpoint({ apiKey: opts.apiKey, baseUrl: opts.baseUrl, timeoutMs: opts.timeoutMs ?? 600_000, policy: opts.policy }) : null;
  }

  async call(request: StructuredCall, signal?: AbortSignal, timeoutMs?: number): Promise<StructuredAnswer> {
    if (!this.client) throw new ModelCallError('auth', NOT_CONFIGURED_MESSAGE);
    // The JSON fallback (a server that ignores tool_choice, such as Ollama's Messages API): no tool,
    // the schema in the prompt, and only a reply that is one JSON object is taken (json-answer.ts).
    const asJson = request.strategy === 'json' || request.strategy === 'json_schema';
    const shape = thinkingShape(request.model, request.tool.name, request.maxTokens, request.thinkingBudget);
    // The static system prompt as a text block marked for the prompt cache (the tools before it are
    // cached with it): later calls of the same evaluator version read it at a tenth of the price.
    const system: Anthropic.MessageCreateParams['system'] = request.cacheSystem ? cachedSystem(request.system) : request.system;
    const params: Anthropic.MessageCreateParamsNonStreaming = asJson
      ? { model: request.model, system, messages: [{ role: 'user', content: userContent(request, request.prompt + jsonInstruction(request.tool)) }], max_tokens: shape.max_tokens }
      : {
          model: request.model,
          system,
          messages: [{ role: 'user', content: userContent(request, request.prompt) }],
          tools: toolsParam(request.tool),
          // max_tokens, tool_choice and thinking in the form this model's generation accepts, in
          // the shape's order; written out rather than spread (a spread costs a microsecond or more on Node 20).
          max_tokens: shape.max_tokens,
          tool_choice: shape.tool_choice,
        };
    if (!asJson && shape.thinking !== undefined) params.thinking = shape.thinking;
    if (!asJson && shape.output_config !== undefined) params.output_config = shape.output_config;
    const temperature = temperatureFor(request, asJson ? undefined : shape.thinking);
    // Not in the SDK's types any more (deprecated by the API); the models that still take it get it.
    if (temperature !== null) (params as unknown as Record<string, unknown>).temperature = temperature;

    let message: Anthropic.Message;
    try {
      // A per-request timeout fails as the SDK's did (an APIConnectionTimeoutError, classified as `timeout`).
      message = await this.client.create(params, { signal, timeoutMs: timeoutMs === undefined ? undefined : Math.max(1, Math.ceil(timeoutMs)) });
    } catch (err) {
      throw classify(err, signal);
    }

    if (!message || typeof message !== 'object' || !Array.isArray(message.content)) {
      // A 200 that is not a Messages API answer (an HTML error page from a proxy, say): a provider fault.
      throw new ModelCallError('server_error', 'The judge model answered 200 with something that is not a Messages API message; check ANTHROPIC_BASE_URL.');
    }
    // The API's input_tokens leaves out the cached tokens; ours counts every prompt token, with the cached parts named.
    const cacheRead = tokens(message.usage?.cache_read_input_tokens);
    const cacheWrite = tokens(message.usage?.cache_creation_input_tokens);
    const usage = {
      input_tokens: tokens(message.usage?.input_tokens) + cacheWrite + cacheRead,
      output_tokens: tokens(message.usage?.output_tokens),
      cache_read_tokens: cacheRead,
      cache_write_tokens: cacheWrite,
    };
    const answeredBy = typeof message.model === 'string' && message.model ? message.model : request.model;
    if (asJson) {
      const text = message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
      const input = parseJsonReply(text);
      if (!input) {
        throw new ModelCallError('malformed', `The judge model gave no structured answer: its reply was not one JSON object (stop_reason ${message.stop_reason ?? 'unknown'}).`, {
          usage,
          model: answeredBy,
        });
      }
      return { input, model: answeredBy, usage, temperature };
    }
    const block = message.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use' && b.name === request.tool.name);
    if (!block) {
      const why =
        message.stop_reason === 'max_tokens'
          ? `its answer was cut off at max_tokens (${params.max_tokens}; raise TRIBUNAL_MODEL_MAX_TOKENS)`
          : `it answered without calling the tool ${request.tool.name} (stop_reason ${message.stop_reason ?? 'unknown'})`;
      throw new ModelCallError('malformed', `The judge model gave no structured answer: ${why}.`, { usage, model: typeof message.model === 'string' ? message.model : undefined });
    }
    return { input: block.input, model: answeredBy, usage, temperature };
  }

  /**
   * A registered model's capabilities: whether the server honours the forced tool (Ollama's Messages
   * API answers in prose instead); the Messages API has no JSON-schema format or log-probabilities.
   */
  async verify(model: string, timeoutMs: number): Promise<ModelCapabilities> {
    const base = { model, system: PROBE_SYSTEM, prompt: PROBE_PROMPT, tool: PROBE_TOOL, maxTokens: 64 };
    const forced_tool = await probeStep(() => this.call({ ...base, strategy: 'tool' }, undefined, timeoutMs));
    // Without the tool the JSON fallback must work, or the model cannot score at all: its error is the answer.
    if (!forced_tool) await this.call({ ...base, strategy: 'json' }, undefined, timeoutMs);
    return { forced_tool, json_schema: false, logprobs: false };
  }
}

/**
 * The temperature to send, or null for none. The Messages API deprecated `temperature` (the SDK no
 * longer types it) and the adaptive-thinking generations (Claude 4.6 on) refuse it; thinking needs
 * the default. So it goes only to the budget-thinking generation (up to 4.5, and names we cannot
 * read, such as a local Messages API server) on a call without thinking.
 */
export function temperatureFor(request: StructuredCall, thinking: unknown): number | null {
  if (request.temperature === undefined || thinking !== undefined) return null;
  return thinkingGeneration(request.model) === 'budget' ? request.temperature : null;
}

function classify(err: unknown, signal?: AbortSignal): ModelCallError {
  if (err instanceof ModelCallError) return err;
  // An answer over the size cap, or an address the policy refuses (h-harden): said plainly.
  const refused = refusalOf(err);
  if (refused) return refused;
  if (err instanceof Anthropic.APIUserAbortError || signal?.aborted) {
    return new ModelCallError('aborted', 'The judge-model call was cancelled.', { cause: err });
  }
  if (err instanceof Anthropic.APIConnectionTimeoutError) {
    return new ModelCallError('timeout', 'The judge model did not answer in time.', { cause: err });
  }
  if (err instanceof Anthropic.APIConnectionError) {
    return new ModelCallError('connection', `Could not reach the judge model (${describeCause(err)}); check ANTHROPIC_BASE_URL and the network.`, { cause: err });
  }
  if (err instanceof Anthropic.APIError && typeof err.status === 'number') {
    const kind = kindForStatus(err.status);
    const apiMessage = err.apiMessage ?? (err.error as { error?: { message?: string } } | undefined)?.error?.message ?? '';
    const detail = `${err.status}${err.type ? ` ${err.type}` : ''}${apiMessage ? `: ${apiMessage}` : ''}`;
    const message =
      kind === 'auth'
        ? `The judge model refused the API key (${detail}); check ANTHROPIC_API_KEY.`
        : kind === 'rejected'
          ? `The judge model rejected the request (${detail}); check the model name (TRIBUNAL_MODEL or the evaluator's model) and TRIBUNAL_MODEL_MAX_TOKENS.`
          : kind === 'rate_limited'
            ? `The judge model is rate limiting this server (${detail}).`
            : kind === 'overloaded'
              ? `The judge model is overloaded (${detail}).`
              : `The judge model failed (${detail}).`;
    return new ModelCallError(kind, message, { status: err.status, retryAfterMs: parseRetryAfter(err.headers), cause: err });
  }
  // e.g. a 200 whose body is not JSON: a provider fault, worth another try.
  return new ModelCallError('server_error', `The judge model sent an unreadable answer (${(err as Error)?.message ?? String(err)}).`, { cause: err });
}

function describeCause(err: Error): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? err.message ?? 'connection error';
}
