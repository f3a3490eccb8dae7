// The shape of a tool module (tools/*.ts) and the one way every caller invokes a tool handler.
// REST routes (tools and REST-only operations) and MCP tool calls all go through invokeTool, so validation and limits apply alike.
import type { z } from 'zod';
import type { Config } from './config.ts';
import type { RequestContext, SpanRunner } from './context.ts';
import type { BatchQueue } from './batch/queue.ts';
import type { SyntheticRunner } from './surface/synthetic-runner.ts';
import type { ScoringEngine } from './runs/types.ts';
import type { JudgeGenerator } from './generation/types.ts';
import { fromZodError } from './errors.ts';
import { enforceLimits } from './limits.ts';
import type { Store } from './store/types.ts';
import { plainParse } from './schemas/plain-parse.ts';
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
  /** The batch runner of this process (started by buildServices); stop it before closing the store. */
  batches?: BatchQueue;
  /** Synthetic test data generation in the background (room surface; src/surface/synthetic-runner.ts). */
  synthetic?: SyntheticRunner;
  /** Online evaluation of received spans (src/traces/rules/worker.ts); stopped by stopServices. */
  traceEvaluation?: { stop(): Promise<void> };
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

export async function invokeTool<I extends z.ZodObject, O extends z.ZodObject, C extends Pick<Services, 'config' | 'spans'>>(
  tool: ToolDefinition<I, O, C>,
  rawInput: unknown,
  ctx: C,
): Promise<z.infer<O>> {
  const input = toolInput(tool, rawInput, ctx);
  return inToolSpan(tool, ctx, () => tool.handler(input, ctx));
}

/** A tool's input checked as invokeTool checks it (schema, then limits): for a caller that runs the tool's work itself. */
export function toolInput<I extends z.ZodObject>(
  tool: Pick<ToolDefinition<I, z.ZodObject, never>, 'input' | 'name'>,
  rawInput: unknown,
  ctx: Pick<Services, 'config'>,
): z.infer<I> {
  const raw = rawInput ?? {};
  // An input the schema surely accepts is read without zod's per-field work (issue 33: a run's
  // input); anything else, and every refusal with its wording, is zod's (schemas/plain-parse.ts).
  const plain = plainParse(tool.input, raw) as z.infer<I> | undefined;
  if (plain) {
    enforceLimits(plain, ctx.config.limits);
    return plain;
  }
  const parsed = tool.input.safeParse(raw);
  if (!parsed.success) throw fromZodError(parsed.error, `input to ${tool.name}`);
  enforceLimits(parsed.data, ctx.config.limits);
  return parsed.data;
}

/** The tool's trace span around `run`, when tracing is on. */
export const inToolSpan = <T>(tool: { name: string }, ctx: Pick<Services, 'spans'>, run: () => Promise<T>): Promise<T> =>
  ctx.spans ? ctx.spans.inSpan(`tool ${tool.name}`, { 'tribunal.tool': tool.name }, run) : run();
