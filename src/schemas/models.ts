// Judge models an organization registers (SPEC section 11).
import { z } from 'zod';
import { id, timestamp } from './core.ts';

export const ModelProvider = z
  .enum(['anthropic', 'openai'])
  .describe('anthropic: the Messages API; openai: the Chat Completions API (OpenAI, vLLM, Ollama, LM Studio, llama.cpp, LiteLLM)');
export const ModelPrice = z
  .object({
    input: z.number().min(0).max(10_000).describe('USD per million input tokens'),
    output: z.number().min(0).max(10_000).describe('USD per million output tokens'),
    cache_read: z
      .number()
      .min(0)
      .max(10_000)
      .optional()
      .describe("USD per million input tokens read from the provider's prompt cache; default: the provider's rate (Anthropic 0.1x input, OpenAI 0.5x)"),
    cache_write: z
      .number()
      .min(0)
      .max(10_000)
      .optional()
      .describe("USD per million input tokens written to the prompt cache; default: the provider's rate (Anthropic 1.25x input, OpenAI 1x)"),
  })
  .strict()
  .describe('USD per million input and output tokens');
export const ModelCapabilities = z.object({
  forced_tool: z.boolean().describe('the server honours a forced tool call'),
  json_schema: z.boolean().describe('the server honours a JSON-schema response format'),
  logprobs: z.boolean().describe('the server returns token log-probabilities'),
});
export type ModelCapabilities = z.infer<typeof ModelCapabilities>;

/** A judge model registered by an organization (SPEC section 11). The API key itself is write-only. */
export const Model = z.object({
  id: id('model'),
  name: z.string().describe("what an evaluator's `model` refers to"),
  provider: ModelProvider,
  base_url: z.string().nullable().describe("the provider's endpoint; null = the provider's public API"),
  model: z.string().describe("the provider's own model id"),
  api_key_hint: z.string().nullable().describe('the last 4 characters of the API key; the key itself is never shown'),
  max_concurrency: z.number().int().describe('calls to this model in flight at once, per server instance'),
  price: ModelPrice.nullable().describe('USD per million tokens; null = unknown (costs are then null)'),
  capabilities: ModelCapabilities.nullable().describe('what `verify` found; null until verified'),
  supports_attachments: z.boolean().describe('the model takes images and PDFs (attachments on runs); set by you, default false'),
  verified_at: timestamp.nullable().describe('when `verify` last succeeded'),
  created_at: timestamp,
  updated_at: timestamp,
});
export type Model = z.infer<typeof Model>;
