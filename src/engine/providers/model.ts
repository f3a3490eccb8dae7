// The judge-model interface: one structured call, answered through a tool the model must call.
// The Anthropic implementation lives in anthropic-model.ts; scoring and generation both use this.

/** A file given to the model with the user turn (h-attach): the provider's own image or document part. */
export interface ModelAttachment {
  name: string;
  content_type: 'application/pdf' | 'image/png' | 'image/jpeg' | 'image/webp';
  sha256: string;
  /** The bytes, base64. */
  data: string;
}

export interface StructuredCall {
  /** Model name (TRIBUNAL_MODEL or an evaluator override). */
  model: string;
  system: string;
  /** The user turn, exactly as sent. */
  prompt: string;
  /** The tool whose input is the answer; its JSON Schema is what the server validates against too. */
  tool: { name: string; description: string; input_schema: Record<string, unknown> };
  maxTokens: number;
  /** Extended-thinking budget in tokens; 0 or undefined = no thinking. */
  thinkingBudget?: number;
  /**
   * How the answer is asked for (providers/json-answer.ts): a forced tool call (default), a
   * JSON-schema response format, or JSON asked for in the prompt. A registered model's verified
   * capabilities choose it.
   */
  strategy?: 'tool' | 'json_schema' | 'json';
  /** Sampling temperature where the provider takes one; scoring asks for 0 unless the evaluator sets another. */
  temperature?: number;
  /**
   * Ask for token log-probabilities of the answer text, with this many alternatives per token
   * (logprobs.ts). Providers that cannot return them ignore it and answer without `logprobs`.
   */
  topLogprobs?: number;
  /**
   * The system prompt is the same bytes on every call of its kind (scoring: one evaluator version):
   * mark it for the provider's prompt cache (Anthropic `cache_control`; OpenAI-compatible servers
   * cache a repeated prefix by themselves).
   */
  cacheSystem?: boolean;
  /** Files sent before the prompt text in the user turn (engine/attachments.ts checked the model takes them). */
  attachments?: ModelAttachment[];
}

/** One token of the answer text with its log-probability and the most likely alternatives. */
export interface TokenLogprob {
  token: string;
  logprob: number;
  top: Array<{ token: string; logprob: number }>;
}

/** Tokens of one call. input_tokens counts every prompt token, the cached ones included. */
export interface ModelUsage {
  input_tokens: number;
  output_tokens: number;
  /** Prompt tokens read from the provider's prompt cache (a part of input_tokens). */
  cache_read_tokens?: number;
  /** Prompt tokens written to the provider's prompt cache (a part of input_tokens). */
  cache_write_tokens?: number;
}

export interface StructuredAnswer {
  /** The tool input the model produced (not yet validated). */
  input: unknown;
  /** The model that answered, as the API reports it. */
  model: string;
  usage: ModelUsage;
  /** The temperature the request carried; null when none was sent (the provider's default applies). */
  temperature?: number | null;
  /** The answer text's tokens, when `topLogprobs` was asked for and the provider returned them. */
  logprobs?: TokenLogprob[];
}

export interface JudgeModel {
  /** False when no API key is configured: callers answer model_unavailable with how to configure one. */
  readonly configured: boolean;
  /**
   * True when call() honours `timeoutMs` itself, failing with a ModelCallError of kind `timeout`
   * once it is over. Then the retry layer hands it the per-attempt timeout instead of arming an
   * AbortController and a timer of its own for every attempt.
   */
  readonly appliesTimeout?: boolean;
  call(request: StructuredCall, signal?: AbortSignal, timeoutMs?: number): Promise<StructuredAnswer>;
}
