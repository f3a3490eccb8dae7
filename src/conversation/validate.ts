// Conversation inputs (SPEC section 10, docs/SCORING.md "Conversations"): either request/response
// or turns, never both; a conversation needs an assistant turn to judge, and it ends with it unless
// every evaluator of the run judges the conversation as a whole (requires_turns); sizes are limited
// in turns and in characters of the whole conversation. The same checks run on both stores, before
// anything is spent.
import type { ModelAttachment } from '../engine/providers/model.ts';
import type { Config } from '../config.ts';
import { validationError, type FieldError } from '../errors.ts';
import type { Demonstration, ExecutionInput, Turn } from '../schemas.ts';
import { judgedTurnIndex } from './render.ts';

/** A run's inputs after validation: `response` is the judged text (with turns, the judged turn's content). */
export type RunInput = Omit<ExecutionInput, 'response'> & {
  response: string;
  /** With turns: the index of the judged assistant turn. */
  judged_turn?: number;
  /** h-attach: the files of `attachments`, loaded by the engine (engine/attachments.ts). */
  attached?: ModelAttachment[];
};

interface RunEvaluator {
  name: string;
  requires_turns?: boolean;
}

const toolCallsText = (t: Turn) =>
  (t.tool_calls ?? []).reduce((n, c) => n + c.name.length + (c.id?.length ?? 0) + (typeof c.arguments === 'string' ? c.arguments.length : JSON.stringify(c.arguments).length), 0);

/** Characters of the whole conversation: the system prompt, every turn's text, names and tool calls. */
export function conversationChars(turns: readonly Turn[], systemPrompt?: string | null): number {
  let n = systemPrompt?.length ?? 0;
  for (const t of turns) n += t.content.length + (t.name?.length ?? 0) + (t.tool_call_id?.length ?? 0) + toolCallsText(t);
  return n;
}

/** Problems in the structure of a list of turns, whatever the evaluators; empty when it is sound. */
function structureProblems(turns: readonly Turn[], field: string): FieldError[] {
  if (!turns.length) return [{ field, message: 'turns is empty: pass at least the assistant turn to judge, after the turns that led to it' }];
  const problems: FieldError[] = [];
  turns.forEach((t, i) => {
    if (t.tool_calls?.length && t.role !== 'assistant') {
      problems.push({ field: `${field}.${i}.tool_calls`, message: `only assistant turns call tools; turn ${i + 1} has role ${t.role}` });
    }
  });
  if (judgedTurnIndex(turns) < 0) problems.push({ field, message: 'no assistant turn: the last assistant turn is what is judged, so the conversation needs one' });
  return problems;
}

const trailingProblem = (turns: readonly Turn[], field: string): FieldError | null => {
  const last = turns[turns.length - 1];
  return last.role === 'assistant'
    ? null
    : {
        field: `${field}.${turns.length - 1}.role`,
        message: `the last turn (turn ${turns.length}) is a ${last.role} turn; the conversation must end with the assistant turn to judge`,
      };
};

/** What is wrong with a demonstration's shape, or null: response or turns (one of them), sound turns. */
export function demonstrationShapeProblem(d: Demonstration, requiresTurns: boolean): FieldError | null {
  if (d.turns && (d.response !== undefined || d.request !== undefined)) {
    return { field: 'turns', message: 'give either turns or request/response, not both' };
  }
  if (!d.turns && d.response === undefined) return { field: 'response', message: requiresTurns ? 'needs turns (the evaluator requires turns)' : 'needs a response or turns' };
  if (requiresTurns && !d.turns) return { field: 'turns', message: 'needs turns because the evaluator requires turns' };
  if (!d.turns) return null;
  const [first] = structureProblems(d.turns, 'turns');
  return first ?? (requiresTurns ? null : trailingProblem(d.turns, 'turns'));
}

/**
 * Checks the run's inputs against the evaluators it will run and answers them as a RunInput.
 * Every failure is a 400 validation_error that says what to fix.
 */
export function prepareRunInput(input: ExecutionInput, evaluators: readonly RunEvaluator[], limits: Config['limits']): RunInput {
  const { turns } = input;
  // A span id means nothing without its trace (span ids are unique only within a trace).
  if (input.span_id !== undefined && input.trace_id === undefined) {
    throw validationError('span_id was given without trace_id: pass the trace_id of the span too, or leave span_id out.', [{ field: 'span_id', message: 'needs trace_id' }]);
  }
  if (turns === undefined) {
    if (input.response === undefined) {
      throw validationError('Nothing to evaluate: pass the LLM output as `response` (with the `request` that prompted it), or a conversation as `turns`.', [
        { field: 'response', message: 'required unless turns are given' },
      ]);
    }
    return { ...input, response: input.response };
  }
  const both = (['request', 'response'] as const).filter((f) => input[f] !== undefined);
  if (both.length) {
    throw validationError(
      `Give either \`turns\` or \`request\`/\`response\`, not both: this call has turns and ${both.map((f) => `\`${f}\``).join(' and ')}. With turns, the last assistant turn is the response and the earlier turns are its request.`,
      [{ field: 'turns', message: `given together with ${both.join(' and ')}` }, ...both.map((f) => ({ field: f, message: 'given together with turns' }))],
    );
  }
  if (turns.length > limits.turns) {
    throw validationError(`turns has ${turns.length} turns; the limit is ${limits.turns} (TRIBUNAL_MAX_TURNS).`, [{ field: 'turns', message: `at most ${limits.turns} turns` }]);
  }
  const chars = conversationChars(turns, input.system_prompt);
  if (chars > limits.conversationChars) {
    throw validationError(
      `The conversation is ${chars} characters (system prompt, turns and tool calls together); the limit is ${limits.conversationChars} (TRIBUNAL_MAX_CONVERSATION).`,
      [{ field: 'turns', message: `at most ${limits.conversationChars} characters in all` }],
    );
  }
  const problems = structureProblems(turns, 'turns');
  if (problems.length) throw validationError(`Invalid turns: ${problems.map((p) => p.message).join('; ')}.`, problems);
  const trailing = trailingProblem(turns, 'turns');
  const strict = evaluators.filter((e) => !e.requires_turns);
  if (trailing && strict.length) {
    throw validationError(
      `Invalid turns: ${trailing.message}. Only evaluators that declare requires_turns (they judge the whole conversation) accept turns after the last assistant turn; ${strict.map((e) => e.name).join(', ')} do${strict.length === 1 ? 'es' : ''} not.`,
      [trailing],
    );
  }
  const judged = judgedTurnIndex(turns);
  return { ...input, response: turns[judged].content, judged_turn: judged };
}

/** With turns, the conversation before the judged turn stands for the request (SPEC section 12). */
export function hasRequestMaterial(input: RunInput): boolean {
  if (input.turns && input.judged_turn !== undefined) return input.turns.slice(0, input.judged_turn).some((t) => t.content.trim() !== '' || t.tool_calls?.length);
  return input.request !== undefined && input.request.trim() !== '';
}
