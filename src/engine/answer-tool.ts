// The forced tools a judge model answers through (a score, a grade, a comparison) share one frame:
// the justification comes first, so the model writes its reasoning before the verdict it decides
// from it (property order is the order the model writes in), and nothing outside the schema is let in.

/** A forced answer tool as a provider receives it (its input_schema is also what the answer is checked against). */
export type AnswerTool = {
  name: string;
  description: string;
  input_schema: { type: 'object'; properties: Record<string, object>; required: string[]; additionalProperties: false };
};

/**
 * A forced answer tool whose first property is the justification; `verdict` holds the properties
 * written after it, in order, and `required` those of them the model must give.
 */
export function justifiedAnswerTool(tool: { name: string; description: string; justification: string; verdict: Record<string, object>; required: string[] }): AnswerTool {
  return {
    name: tool.name,
    description: tool.description,
    input_schema: {
      type: 'object',
      properties: { justification: { type: 'string', description: tool.justification }, ...tool.verdict },
      required: ['justification', ...tool.required],
      additionalProperties: false,
    },
  };
}
