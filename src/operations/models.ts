// REST-only operations on the organization's registered judge models (SPEC section 11). Never
// registered with MCP. `api_key` is accepted on writes and never part of an answer.
import { z } from 'zod';
import { createModel, deleteModel, getModel, listModels, updateModel, verifyModel } from '../domain/models.ts';
import { Model, ModelPrice, ModelProvider, page, PageParams } from '../schemas.ts';
import { MAKE_SECRET_HINT } from '../secret-box.ts';
import { defineTool, type ToolAnnotations } from '../tool.ts';
import { READ, WRITE } from './annotations.ts';

// Writes to a registered model reach out to its provider's server (verify) or name one that will be.
const WRITE_MODEL: ToolAnnotations = { ...WRITE, openWorldHint: true };

const modelId = z.string().min(1).max(200).describe('id or exact name of the model');
const fields = {
  name: z.string().trim().min(1).max(200).describe("what an evaluator's `model` refers to; unique in your organization"),
  provider: ModelProvider,
  base_url: z.string().max(2000).nullable().describe("the provider's endpoint, e.g. http://127.0.0.1:11434/v1 for Ollama's Chat Completions; null = the provider's public API"),
  model: z.string().trim().min(1).max(200).describe("the provider's own model id, e.g. gpt-4.1-mini or llama3.1:8b"),
  api_key: z.string().min(1).max(4096).nullable().describe('write-only: stored encrypted, never shown again (reads give api_key_hint); null or absent for servers without keys'),
  max_concurrency: z.number().int().min(1).max(256).describe('calls to this model in flight at once per server instance (default 4)'),
  price: ModelPrice.nullable().describe('USD per million tokens; absent or null = unknown (costs are then null)'),
  supports_attachments: z.boolean().describe('the model takes images and PDFs, so runs with attachments may use it (default false)'),
};

export const listModelsOperation = defineTool({
  name: 'list_models',
  title: "List your organization's registered judge models",
  description: "Your organization's registered judge models, newest first (API keys are never shown).",
  input: z.object({ ...PageParams }),
  output: page(Model),
  annotations: READ,
  handler: (input, ctx) => listModels(ctx, input),
});

export const createModelOperation = defineTool({
  name: 'create_model',
  title: 'Register a judge model (needs TRIBUNAL_SECRET_KEY on the server)',
  description: 'Register a judge model for your organization; evaluators name it in `model`. Run verify next to find what it supports.',
  input: z.object({
    ...fields,
    base_url: fields.base_url.optional(),
    api_key: fields.api_key.optional(),
    max_concurrency: fields.max_concurrency.optional(),
    price: fields.price.optional(),
    supports_attachments: fields.supports_attachments.optional(),
  }),
  output: Model,
  annotations: WRITE_MODEL,
  handler: (input, ctx) => createModel(ctx, input),
});

export const getModelOperation = defineTool({
  name: 'get_model',
  title: 'One registered judge model',
  description: 'One of your registered judge models, by id or name.',
  input: z.object({ model_id: modelId }),
  output: Model,
  annotations: READ,
  handler: ({ model_id }, ctx) => getModel(ctx, model_id),
});

export const updateModelOperation = defineTool({
  name: 'update_model',
  title: 'Edit a registered judge model',
  description: 'Edit a registered judge model; a new provider, base_url or model id clears its capabilities until verified again.',
  input: z.object({ model_id: modelId, ...z.object(fields).partial().shape }),
  output: Model,
  annotations: WRITE_MODEL,
  handler: ({ model_id, ...patch }, ctx) => updateModel(ctx, model_id, patch),
});

export const deleteModelOperation = defineTool({
  name: 'delete_model',
  title: 'Delete a registered judge model',
  description: 'Delete a registered judge model; evaluators that name it fail to score until it is registered again.',
  input: z.object({ model_id: modelId }),
  output: Model,
  annotations: WRITE,
  handler: ({ model_id }, ctx) => deleteModel(ctx, model_id),
});

export const verifyModelOperation = defineTool({
  name: 'verify_model',
  title: 'Check a registered judge model with one tiny real call',
  description:
    "Calls the model once per answer strategy (a few tokens each) and stores what it supports: forced tool call, JSON-schema response format, log-probabilities. A provider error is answered as a problem in the provider's words.",
  input: z.object({ model_id: modelId }),
  output: Model,
  annotations: WRITE_MODEL,
  handler: ({ model_id }, ctx) => verifyModel(ctx, model_id),
});

// issue 26 item 12: whether this server can keep model API keys, so the web form warns before a
// registration answers 503 not_available.
export const getModelRegistryOperation = defineTool({
  name: 'get_model_registry',
  title: 'Whether this server can keep model API keys',
  description: 'keeps_api_keys is false when the server has no secret (TRIBUNAL_SECRET_KEY): registering a model then answers 503 not_available; detail says what to set.',
  input: z.object({}),
  output: z.object({
    keeps_api_keys: z.boolean().describe('true when the server has a secret to encrypt model API keys with'),
    detail: z.string().nullable().describe('what the operator sets when keeps_api_keys is false; null otherwise'),
  }),
  annotations: READ,
  handler: async (_input, ctx) => ({
    keeps_api_keys: Boolean(ctx.config.registry.secretKey),
    detail: ctx.config.registry.secretKey
      ? null
      : `This server cannot keep model API keys: the operator sets TRIBUNAL_SECRET_KEY to the base64 of 32 random bytes (make one with: ${MAKE_SECRET_HINT}) and restarts it.`,
  }),
});
