// Org-defined extractor rules: where in a span the inputs of a run are (span, event or resource
// attribute, with an optional JSONPath into a JSON value), for formats Tribunal does not read itself.
import { JSONPath } from 'jsonpath-plus';
import { z } from 'zod';
import type { SpanRecord } from '../types.ts';
import { jsonOf } from './messages.ts';

export const Locator = z
  .object({
    source: z.enum(['span', 'event', 'resource']).default('span').describe("span attributes, an event's attributes (the first event named event_name), or resource attributes"),
    key: z.string().min(1).max(500).describe('the attribute key'),
    event_name: z.string().min(1).max(500).optional().describe('with source event: the event name'),
    path: z.string().min(1).max(500).optional().describe('a JSONPath into the attribute when it holds JSON, e.g. $.messages[-1:].content'),
  })
  .strict();
export type Locator = z.infer<typeof Locator>;

export const ExtractorRule = z
  .object({
    request: Locator.optional(),
    response: Locator.optional(),
    system_prompt: Locator.optional(),
    contexts: Locator.optional().describe('a list of texts, or one text'),
    turns: Locator.optional().describe('a list of {role, content} messages'),
    tool_call: z.object({ name: Locator, arguments: Locator.optional(), result: Locator.optional() }).strict().optional(),
  })
  .strict()
  .describe('where the inputs are in a span; fields it finds take the place of what the built-in formats found');
export type ExtractorRule = z.infer<typeof ExtractorRule>;

/** The located value; undefined when absent. */
export function locate(span: SpanRecord, l: Locator): unknown {
  let attrs: Record<string, unknown> | undefined;
  if (l.source === 'resource') attrs = span.resource_attributes;
  else if (l.source === 'event') attrs = span.events.find((e) => (l.event_name === undefined ? l.key in e.attributes : e.name === l.event_name))?.attributes;
  else attrs = span.attributes;
  const raw = attrs?.[l.key];
  if (raw === undefined || l.path === undefined) return raw;
  const json = jsonOf(raw);
  if (json === null || typeof json !== 'object') return undefined;
  const found = JSONPath({ path: l.path, json: json as object, wrap: true }) as unknown[];
  if (!found.length) return undefined;
  return found.length === 1 ? found[0] : found;
}
