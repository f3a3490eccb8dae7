// A check evaluator: its checks compiled once per evaluator version (cached), run and combined
// into one score with a justification naming each failed check and what was found.
import type { Check, CheckCombine } from '../schemas/checks.ts';
import { compileCheck, type CheckInput, type CompiledCheck } from './compile.ts';

export interface CheckEvaluator {
  id: string;
  version: number;
  checks?: Check[] | null;
  combine?: CheckCombine | null;
}

export interface CheckOutcome {
  score: number;
  justification: string;
}

export interface CompiledEvaluator {
  checks: CompiledCheck[];
  combine: CheckCombine;
}

/** Compiles every check; throws CheckCompileError naming the first that cannot be compiled. */
export function compileChecks(checks: readonly Check[], combine: CheckCombine = 'all'): CompiledEvaluator {
  return { checks: checks.map((c, i) => compileCheck(c, i)), combine };
}

// id@version -> compiled; a version's content never changes, so an entry never goes stale.
const CACHE_MAX = 2000;
const cache = new Map<string, CompiledEvaluator>();

export function compiledFor(evaluator: CheckEvaluator): CompiledEvaluator {
  const key = `${evaluator.id}@${evaluator.version}`;
  let compiled = cache.get(key);
  if (!compiled) {
    compiled = compileChecks(evaluator.checks ?? [], evaluator.combine ?? 'all');
    if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value!);
    cache.set(key, compiled);
  }
  return compiled;
}

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

export function runCompiled(compiled: CompiledEvaluator, input: CheckInput): CheckOutcome {
  const failed: string[] = [];
  const total = compiled.checks.length;
  for (const check of compiled.checks) {
    const found = check.test(input);
    if (found !== null) failed.push(`${check.label}: ${found}`);
  }
  const passed = total - failed.length;
  const score = total === 0 ? 1 : compiled.combine === 'fraction' ? round4(passed / total) : compiled.combine === 'any' ? (passed > 0 ? 1 : 0) : failed.length ? 0 : 1;
  const head = `${passed} of ${total} check${total === 1 ? '' : 's'} passed (combine: ${compiled.combine}).`;
  return { score, justification: failed.length ? `${head} Failed: ${failed.join('; ')}.` : head };
}

export const runChecks = (evaluator: CheckEvaluator, input: CheckInput): CheckOutcome => runCompiled(compiledFor(evaluator), input);
