// "Try on this input": a check or code evaluator's content scored on one input before it is saved
// (the web form's panel, POST /v1/evaluators/try/). Nothing is stored or logged; the content is
// checked as saving would check it, so what is refused here would be refused at save.
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Config } from '../config.ts';
import { prepareRunInput } from '../conversation/validate.ts';
import type { ExecutionInput } from '../schemas.ts';
import { runCode } from './code.ts';
import { compileChecks, runCompiled } from './run-checks.ts';
import { sandboxFor } from './sandbox.ts';
import { checkInputOf, codeInputOf } from './score.ts';
import { settleKind, type KindContent } from './validate.ts';

export interface TryOutcome {
  score: number | null;
  justification: string | null;
  error?: string;
  latency_ms: number;
}

export async function tryEvaluator(config: Pick<Config, 'code' | 'limits'>, orgId: string, content: KindContent, given: ExecutionInput): Promise<TryOutcome> {
  const settled = await settleKind(config, content);
  const input = prepareRunInput(given, [{ name: 'the evaluator tried', requires_turns: settled.requires_turns }], config.limits);
  const started = performance.now();
  const ms = () => Math.round((performance.now() - started) * 10) / 10;
  if (settled.kind === 'check') {
    const { score, justification } = runCompiled(compileChecks(settled.checks ?? [], settled.combine ?? 'all'), checkInputOf(input));
    return { score, justification, latency_ms: ms() };
  }
  const code = settled.code ?? '';
  // Runtimes are kept per organization and code (the same draft tried again reuses its runtime).
  const key = `${orgId}:try:${createHash('sha256').update(code).digest('base64url').slice(0, 22)}`;
  const outcome = await runCode(sandboxFor(config.code), key, code, codeInputOf(input));
  return outcome.ok
    ? { score: outcome.score, justification: outcome.justification, latency_ms: ms() }
    : { score: null, justification: null, error: outcome.error, latency_ms: ms() };
}
