// A judge model on the Chat Completions API through the official `openai` SDK: OpenAI itself and the
// servers that speak it (vLLM, Ollama, LM Studio, llama.cpp, LiteLLM). One call is one HTTP attempt;
// retries, timeouts and the per-model concurrency limit live in resilient-model.ts, as for Anthropic.
// The answer is asked for in the call's strategy: a forced function call, a JSON-schema response
// format, or JSON asked for in the prompt (json-answer.ts); `verify` finds which ones a server honours.
import OpenAI from 'openai';
import type { ModelCapabilities } from '../../schemas.ts';
import { createHttpFetch } from './http-fetch.ts';
import type { JudgeModel, StructuredAnswer, StructuredCall, TokenLogprob } from './model.ts';
import { kindForStatus, ModelCallError, parseRetryAfter } from './model-errors.ts';
import { jsonInstruction, parseJsonReply } from './json-answer.ts';
import type { AddressPolicy } from './address-policy.ts';
import { refusalOf } from './upstream-text.ts';
import { PROBE_PROMPT, PROBE_SYSTEM, PROBE_TOOL, probeStep } from './probe.ts';

export interface OpenAIModelOptions {
  /** Local servers take no key; the SDK still sends one, so a placeholder goes instead (never OPENAI_API_KEY). */
  apiKey: string | null;
  baseUrl: string | null;
  timeoutMs: number;
  /** The SSRF policy (address-policy.ts). */
  policy?: AddressPolicy;
}

type Completion = OpenAI.Chat.Completions.ChatCompletion;

/**
 * The user turn: the prompt text after the run's attachments (h-attach) as Chat Completions' own
 * parts: `image_url` with a data URL for images, `file` with `file_data` for a PDF. Without
 * attachments the content stays a plain string.
 */
function userContent(request: StructuredCall, text: string): string | OpenAI.Chat.Completions.ChatCompletionContentPart[] {
  if (!request.attachments?.length) return text;
  const parts: OpenAI.Chat.Completions.ChatCompletionContentPart[] = request.attachments.map((a) =>
    a.content_type === 'application/pdf'
      ? { type: 'file', file: { filename: a.name, file_data: `data:application/pdf;base64,${a.data}` } }
      : { type: 'image_url', image_url: { url: `data:${a.content_type};base64,${a.data}` } },
  );
  return [...parts, { type: 'text', text }];
}

export class OpenAIJudgeModel implements JudgeModel {
  readonly configured = true;
  readonly appliesTimeout = true;
  private readonly client: OpenAI;

  constructor(opts: OpenAIModelOptions) {
    this.client = new OpenAI({
      apiKey: opts.apiKey ?? 'no-key',
      baseURL: opts.baseUrl ?? undefined,
      maxRetries: 0,
      timeout: opts.timeoutMs,
      fetch: createHttpFetch({ policy: opts.policy }),
    });
  }

  async call(request: StructuredCall, signal?: AbortSignal, timeoutMs?: number): Promise<StructuredAnswer> {
    const completion = await this.complete(request, signal, timeoutMs, request.topLogprobs !== undefined);
    const answer = answerOf(completion, request);
    return request.topLogprobs === undefined ? answer : { ...answer, logprobs: contentLogprobs(completion) };
  }

  /** Which structured-answer strategies this server honours, and whether it returns log-probabilities. */
  async verify(model: string, timeoutMs: number): Promise<ModelCapabilities> {
    const base = { model, system: PROBE_SYSTEM, prompt: PROBE_PROMPT, tool: PROBE_TOOL, maxTokens: 64 };
    const forced_tool = await probeStep(() => this.call({ ...base, strategy: 'tool' }, undefined, timeoutMs));
    let logprobs = false;
    const json_schema = await probeStep(async () => {
      const completion = await this.complete({ ...base, strategy: 'json_schema' }, undefined, timeoutMs, true);
      logprobs = hasLogprobs(completion);
      return answerOf(completion, { ...base, strategy: 'json_schema' });
    });
    if (!json_schema) {
      const plain = await probeStep(async () => {
        logprobs = hasLogprobs(await this.complete({ ...base, strategy: 'json' }, undefined, timeoutMs, true));
      });
      // Nothing worked, not even plain JSON: once more without logprobs, so a refusal (an unknown
      // model id, say) reaches the caller in the provider's own words instead of "no capabilities".
      if (!plain && !forced_tool) await this.complete({ ...base, strategy: 'json' }, undefined, timeoutMs);
    }
    return { forced_tool, json_schema, logprobs };
  }

  private async complete(request: StructuredCall, signal: AbortSignal | undefined, timeoutMs: number | undefined, logprobs = false): Promise<Completion> {
    const strategy = request.strategy ?? 'tool';
    const { tool } = request;
    const params: OpenAI.Chat.Completions.ChatCompletionCreateParamsNonStreaming = {
      model: request.model,
      messages: [
        { role: 'system', content: request.system },
        { role: 'user', content: userContent(request, strategy === 'json' ? request.prompt + jsonInstruction(tool) : request.prompt) },
      ],
      max_completion_tokens: request.maxTokens,
      temperature: request.temperature ?? 0,
    };
    if (strategy === 'tool') {
      params.tools = [{ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.input_schema } }];
      params.tool_choice = { type: 'function', function: { name: tool.name } };
      params.parallel_tool_calls = false;
    } else if (strategy === 'json_schema') {
      params.response_format = { type: 'json_schema', json_schema: { name: tool.name, description: tool.description, schema: tool.input_schema } };
    }
    if (logprobs) params.logprobs = true;
    if (logprobs && request.topLogprobs !== undefined) params.top_logprobs = request.topLogprobs;
    const options: OpenAI.RequestOptions = timeoutMs === undefined ? {} : { timeout: Math.max(1, Math.ceil(timeoutMs)) };
    if (signal) options.signal = signal;
    let completion: Completion;
    try {
      completion = await this.client.chat.completions.create(params, options);
    } catch (err) {
      throw classify(err, signal);
    }
    if (!completion || typeof completion !== 'object' || !Array.isArray(completion.choices)) {
      throw new ModelCallError('server_error', "The judge model answered 200 with something that is not a Chat Completions answer; check the model's base_url.");
    }
    return completion;
  }
}

const tokens = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.round(n) : 0);

function answerOf(completion: Completion, request: StructuredCall): StructuredAnswer {
  // prompt_tokens counts the cached ones too; automatic prefix caching has no write charge.
  const usage = {
    input_tokens: tokens(completion.usage?.prompt_tokens),
    output_tokens: tokens(completion.usage?.completion_tokens),
    cache_read_tokens: tokens(completion.usage?.prompt_tokens_details?.cached_tokens),
  };
  const model = typeof completion.model === 'string' && completion.model ? completion.model : request.model;
  const choice = completion.choices[0];
  const malformed = (why: string) => new ModelCallError('malformed', `The judge model gave no structured answer: ${why}.`, { usage, model });
  if (!choice) throw malformed('its answer had no choices');
  const cutOff = choice.finish_reason === 'length' ? ` (cut off at max_tokens ${request.maxTokens})` : '';
  let text: string | null | undefined;
  if ((request.strategy ?? 'tool') === 'tool') {
    const call = choice.message?.tool_calls?.find((c) => c.type === 'function' && c.function.name === request.tool.name);
    if (!call || call.type !== 'function') throw malformed(`it answered without calling the function ${request.tool.name}${cutOff}`);
    text = call.function.arguments;
  } else {
    text = choice.message?.content;
  }
  const input = typeof text === 'string' ? parseJsonReply(text) : undefined;
  if (!input) throw malformed(`its answer was not one JSON object${cutOff}`);
  return { input, model, usage, temperature: request.temperature ?? 0 };
}

function hasLogprobs(completion: Completion): boolean {
  const content = completion.choices[0]?.logprobs?.content;
  return Array.isArray(content) && content.length > 0 && typeof content[0]?.logprob === 'number';
}

/** The answer text's token log-probabilities, or undefined when the server sent none. */
function contentLogprobs(completion: Completion): TokenLogprob[] | undefined {
  const content = completion.choices[0]?.logprobs?.content;
  if (!Array.isArray(content) || !content.length) return undefined;
  return content.map((t) => ({
    token: String(t.token),
    logprob: Number(t.logprob),
    top: Array.isArray(t.top_logprobs) ? t.top_logprobs.map((a) => ({ token: String(a.token), logprob: Number(a.logprob) })) : [],
  }));
}

function classify(err: unknown, signal?: AbortSignal): ModelCallError {
  if (err instanceof ModelCallError) return err;
  // An answer over the size cap, or an address the policy refuses (h-harden): said plainly.
  const refused = refusalOf(err);
  if (refused) return refused;
  if (err instanceof OpenAI.APIUserAbortError || signal?.aborted) return new ModelCallError('aborted', 'The judge-model call was cancelled.', { cause: err });
  if (err instanceof OpenAI.APIConnectionTimeoutError) return new ModelCallError('timeout', 'The judge model did not answer in time.', { cause: err });
  if (err instanceof OpenAI.APIConnectionError) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return new ModelCallError('connection', `Could not reach the judge model (${cause?.code ?? cause?.message ?? err.message}); check the model's base_url and the network.`, {
      cause: err,
    });
  }
  if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
    const kind = kindForStatus(err.status);
    const apiMessage = (err.error as { message?: string } | undefined)?.message ?? '';
    const detail = `${err.status}${apiMessage ? `: ${apiMessage}` : ''}`;
    const message =
      kind === 'auth'
        ? `The judge model refused the API key (${detail}); check the model's api_key.`
        : kind === 'rejected'
          ? `The judge model rejected the request (${detail}); check the model's provider model id.`
          : kind === 'rate_limited'
            ? `The judge model is rate limiting this server (${detail}).`
            : `The judge model failed (${detail}).`;
    return new ModelCallError(kind, message, { status: err.status, retryAfterMs: parseRetryAfter(err.headers), cause: err });
  }
  return new ModelCallError('server_error', `The judge model sent an unreadable answer (${(err as Error)?.message ?? String(err)}).`, { cause: err });
}
