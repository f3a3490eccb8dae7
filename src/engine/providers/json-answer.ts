// The structured-answer fallback for servers that honour neither a forced tool call nor a JSON-schema
// response format (Ollama's Messages API ignores tool_choice; llama.cpp maps a named tool to
// "required"): the answer is asked for as one JSON object against the tool's own schema, and only a
// reply that is exactly such an object (optionally in one ``` fence) is taken. The value then goes
// through the same zod check and malformed-answer retry as a tool call; a score is never read out of prose.
import type { StructuredCall } from './model.ts';

/** How a structured answer is asked for; chosen from a registered model's verified capabilities. */
export type AnswerStrategy = 'tool' | 'json_schema' | 'json';

export function jsonInstruction(tool: StructuredCall['tool']): string {
  return [
    '',
    `Answer with one JSON object and nothing else (no prose, no code fence): the input of the function ${tool.name} (${tool.description}),`,
    `valid against this JSON Schema:`,
    JSON.stringify(tool.input_schema),
  ].join('\n');
}

const FENCED = /^```(?:json)?\s*\n([\s\S]*?)\n?```$/;

/** The JSON object the whole reply is, or undefined (then the answer is malformed). */
export function parseJsonReply(text: string): Record<string, unknown> | undefined {
  const trimmed = text.trim();
  const body = FENCED.exec(trimmed)?.[1] ?? trimmed;
  try {
    const value: unknown = JSON.parse(body);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
