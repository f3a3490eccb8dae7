// Inline judging (SPEC section 13): what a proxied exchange's execution log keeps about the upstream
// call, apart from the judging's own tokens and cost, and a judge's guardrail. Kept beside
// src/schemas.ts, which uses these blocks (this file imports nothing from it).
import { z } from 'zod';

export const Guardrail = z
  .object({
    threshold: z.number().min(0).max(1).describe('a proxied answer whose run score is below this is blocked or flagged'),
    action: z.enum(['flag', 'block']).describe('block: the answer is replaced by `message` (finish_reason content_filter); flag: it is only marked (tribunal.flagged)'),
    message: z.string().min(1).max(10_000).optional().describe('what a blocked answer is replaced with (default: a neutral refusal)'),
  })
  .describe('inline judging (the judge proxy): what happens to an answer that scores below the threshold; guardrails need synchronous judging');
export type Guardrail = z.infer<typeof Guardrail>;

export const ProxyLogInfo = z
  .object({
    api: z.enum(['chat.completions', 'responses']).describe('the OpenAI API the application called'),
    model: z.string().describe('the model the application asked for (a registered model name)'),
    upstream_model: z.string().nullable().describe('the provider model id the answer came from'),
    streamed: z.boolean().describe('whether the answer was streamed (SSE)'),
    status: z.number().int().nullable().describe('the upstream HTTP status; null when it could not be reached'),
    outcome: z
      .enum(['answered', 'upstream_error', 'upstream_unreachable', 'client_disconnected'])
      .describe('how the exchange ended: answered; the upstream refused or failed; could not be reached; the client went away mid-answer'),
    finish_reason: z.string().nullable().describe('the upstream finish reason (before any guardrail)'),
    input_tokens: z.number().int().nullable().describe('upstream prompt tokens, when reported'),
    output_tokens: z.number().int().nullable().describe('upstream completion tokens, when reported'),
    cost_usd: z.number().nullable().describe("upstream cost in USD from the registered model's price; null when unknown (the judging cost is the log's cost_usd)"),
    latency_ms: z.number().describe('wall time of the upstream call'),
    async_judge: z.boolean().describe('judged after the answer was sent'),
    flagged: z.boolean().describe('the score fell below the guardrail threshold'),
    blocked: z.boolean().describe("the answer was replaced by the guardrail message (the original is the log's response)"),
    error: z.string().nullable().describe('what went wrong upstream, or why the exchange was not judged'),
  })
  .describe('for type proxy: the upstream call of the judge proxy, apart from the judging');
export type ProxyLogInfo = z.infer<typeof ProxyLogInfo>;
