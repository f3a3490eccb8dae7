// The shape of a tool module (tools/*.ts) and the one way every caller invokes a tool handler.
// REST routes (tools and REST-only operations) and MCP tool calls all go through invokeTool, so validation and limits apply alike.
import { z } from 'zod';
import type { Config } from './config.ts';
import type { RequestContext, SpanRunner } from './context.ts';
import type { ScoringEngine } from './engine/types.ts';
import type { JudgeGenerator } from './generation/types.ts';
import { fromZodError, validationError } from './errors.ts';
import type { Store } from './store/types.ts';
import { strictInput } from './unknown-fields.ts';

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: false;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** Services the handlers use; with the caller they make the core's request context (context.ts). */
export interface Services {
  store: Store;
  config: Config;
  engine: ScoringEngine;
  generator: JudgeGenerator;
  /** Trace spans for tools and store writes, when tracing is on. */
  spans?: SpanRunner;
}

export interface ToolContext extends Services, RequestContext {}

/**
 * One operation: the 14 MCP tools (tools/*.ts) and the REST-only operations (src/operations/) alike.
 * `C` is the context its handler needs: a caller for everything but the demo-user endpoint.
 */
export interface ToolDefinition<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject, C = ToolContext> {
  name: string;
  title: string;
  /** For an agent: when to use it and what it returns. */
  description: string;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  handler: (input: z.infer<I>, ctx: C) => Promise<z.infer<O>>;
}

export function defineTool<I extends z.ZodObject, O extends z.ZodObject, C = ToolContext>(tool: ToolDefinition<I, O, C>): ToolDefinition<I, O, C> {
  // Unknown input fields are refused on both doors, nested ones too (src/unknown-fields.ts).
  return { ...tool, input: strictInput(tool.input) };
}

/**
 * Walks validated input and enforces the configured size limits: every string at most
 * `textChars` characters, `contexts` at most `contexts` items. Zod schemas stay static (they are
 * published as JSON Schema); the limits are configuration.
 */
export function enforceLimits(value: unknown, limits: Config['limits'], path: string[] = []): void {
  if (typeof value === 'string') {
    if (value.length > limits.textChars) {
      throw validationError(`${path.join('.') || 'value'} is ${value.length} characters; the limit is ${limits.textChars} (TRIBUNAL_MAX_TEXT).`, [
        { field: path.join('.'), message: `at most ${limits.textChars} characters` },
      ]);
    }
  } else if (Array.isArray(value)) {
    if (path[path.length - 1] === 'tags') checkTags(value, limits, path.join('.'));
    if (path[path.length - 1] === 'contexts' && value.length > limits.contexts) {
      throw validationError(`contexts has ${value.length} items; the limit is ${limits.contexts} (TRIBUNAL_MAX_CONTEXTS).`, [
        { field: path.join('.'), message: `at most ${limits.contexts} items` },
      ]);
    }
    value.forEach((item, i) => enforceLimits(item, limits, [...path, String(i)]));
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) enforceLimits(v, limits, [...path, k]);
  }
}

/** Tags are stored and indexed with every log: bounded before any model call is paid for. */
function checkTags(tags: unknown[], limits: Config['limits'], field: string): void {
  if (tags.length > limits.tags) {
    throw validationError(`${field} has ${tags.length} tags; the limit is ${limits.tags} (TRIBUNAL_MAX_TAGS).`, [{ field, message: `at most ${limits.tags} tags` }]);
  }
  tags.forEach((tag, i) => {
    if (typeof tag === 'string' && tag.length > limits.tagChars) {
      throw validationError(`${field}.${i} is ${tag.length} characters; a tag is at most ${limits.tagChars} (TRIBUNAL_MAX_TAG_CHARS).`, [
        { field: `${field}.${i}`, message: `at most ${limits.tagChars} characters` },
      ]);
    }
  });
}

export async function invokeTool<I extends z.ZodObject, O extends z.ZodObject, C extends Pick<Services, 'config' | 'spans'>>(
  tool: ToolDefinition<I, O, C>,
  rawInput: unknown,
  ctx: C,
): Promise<z.infer<O>> {
  const parsed = tool.input.safeParse(rawInput ?? {});
  if (!parsed.success) throw fromZodError(parsed.error, `input to ${tool.name}`);
  enforceLimits(parsed.data, ctx.config.limits);
  const run = () => tool.handler(parsed.data, ctx);
  return ctx.spans ? ctx.spans.inSpan(`tool ${tool.name}`, { 'tribunal.tool': tool.name }, run) : run();
}
