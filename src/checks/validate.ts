// Saving a check or code evaluator (create and update): the fields must fit the kind, every check
// must compile, and code must compile and survive one run on a sample; else a 400 that names the
// field (and, for code, the line).
import type { Config } from '../config.ts';
import { validationError } from '../errors.ts';
import type { Check, CheckCombine, EvaluatorKind } from '../schemas/checks.ts';
import { SAMPLE_INPUT, describeFailure } from './code.ts';
import { CheckCompileError } from './compile.ts';
import { compileChecks } from './run-checks.ts';
import { sandboxFor } from './sandbox.ts';

export interface KindContent {
  kind?: EvaluatorKind;
  checks?: Check[] | null;
  combine?: CheckCombine | null;
  code?: string | null;
  rubric?: string;
  requires_expected_output?: boolean;
  requires_turns?: boolean;
}

/** What a kind makes of the content: its fields cleared or checked, the rubric, the inputs it needs. */
export async function settleKind<T extends KindContent>(config: Pick<Config, 'code'>, content: T, codeChanged = true): Promise<T> {
  const kind = content.kind ?? 'llm';
  if (kind === 'llm') {
    for (const f of ['checks', 'code'] as const) {
      if (content[f] !== undefined && content[f] !== null)
        throw validationError(`\`${f}\` belongs to evaluators of kind ${f === 'code' ? 'code' : 'check'}; set kind too.`, [
          { field: f, message: `only with kind ${f === 'code' ? 'code' : 'check'}` },
        ]);
    }
    if (!content.rubric?.trim())
      throw validationError('An llm evaluator needs a rubric: what earns a high, a middling and a low score.', [{ field: 'rubric', message: 'required for kind llm' }]);
    return content;
  }
  if (kind === 'check') {
    if (!content.checks?.length)
      throw validationError('A check evaluator needs `checks`: at least one, e.g. [{"type": "json_valid"}].', [{ field: 'checks', message: 'required for kind check' }]);
    if (content.code) throw validationError('`code` belongs to evaluators of kind code.', [{ field: 'code', message: 'only with kind code' }]);
    let labels: string[];
    try {
      labels = compileChecks(content.checks, content.combine ?? 'all').checks.map((c) => c.label);
    } catch (e) {
      if (e instanceof CheckCompileError) throw validationError(`${e.field} ${e.message}.`, [{ field: e.field, message: e.message }]);
      throw e;
    }
    const needsExpected = content.checks.some((c) => (c.type === 'equals' && c.value === undefined) || (c.type !== 'tool_call' && c.field === 'expected_output'));
    const needsTurns = content.checks.some((c) => c.type === 'tool_call');
    return {
      ...content,
      combine: content.combine ?? 'all',
      code: null,
      rubric: content.rubric?.trim() ? content.rubric : `Declarative checks (combine: ${content.combine ?? 'all'}): ${labels.join('; ')}.`,
      requires_expected_output: content.requires_expected_output || needsExpected,
      requires_turns: content.requires_turns || needsTurns,
    };
  }
  if (!content.code?.trim())
    throw validationError('A code evaluator needs `code`: the body of a JavaScript function score(input), e.g. "return input.response.length < 500 ? 1 : 0".', [
      { field: 'code', message: 'required for kind code' },
    ]);
  if (content.checks?.length) throw validationError('`checks` belong to evaluators of kind check.', [{ field: 'checks', message: 'only with kind check' }]);
  if (codeChanged) {
    const tried = await sandboxFor(config.code).tryOnce(content.code, SAMPLE_INPUT);
    // A throw on the sample is allowed (the code may expect turns); what cannot compile, or cannot
    // finish within the limits, is refused now rather than failing every run.
    if (!tried.ok && tried.error.kind !== 'throw') {
      const message = describeFailure(tried.error);
      throw validationError(`code: ${message}.`, [{ field: 'code', message: tried.error.line ? `line ${tried.error.line}: ${tried.error.message}` : tried.error.message }]);
    }
  }
  return { ...content, checks: null, combine: null, rubric: content.rubric?.trim() ? content.rubric : 'Scored by code: score(input) in the sandbox.' };
}
