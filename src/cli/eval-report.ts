// The end of `tribunal eval`: per-evaluator statistics, the --fail-under gate, the exit code, and
// the summary as a table or as --json.
import { CliError, EXIT } from './errors.ts';
import type { BatchSummary, ResultLine } from './eval-runner.ts';
import { printJson, table } from './output.ts';
import { formatSeconds } from './progress.ts';

interface EvaluatorStats {
  evaluator_id: string;
  evaluator_name: string;
  scored: number;
  failed: number;
  mean: number | null;
  min: number | null;
  pass_rate: number | null;
}

function stats(lines: ResultLine[], order: Array<{ id: string; name: string }>, threshold: number) {
  const by = new Map<string, { name: string; scores: number[]; failed: number }>();
  for (const e of order) by.set(e.id, { name: e.name, scores: [], failed: 0 });
  const overall: number[] = [];
  for (const l of lines) {
    if (l.status !== 'ok') continue;
    if (typeof l.score === 'number') overall.push(l.score);
    for (const r of l.evaluator_results ?? []) {
      let s = by.get(r.evaluator_id);
      if (!s) by.set(r.evaluator_id, (s = { name: r.evaluator_name, scores: [], failed: 0 }));
      if (typeof r.score === 'number') s.scores.push(r.score);
      else s.failed++;
    }
  }
  const summarize = (scores: number[]) => ({
    mean: scores.length ? scores.reduce((a, b) => a + b, 0) / scores.length : null,
    min: scores.length ? Math.min(...scores) : null,
    pass_rate: scores.length ? scores.filter((s) => s >= threshold).length / scores.length : null,
  });
  const evaluators: EvaluatorStats[] = [...by].map(([id, s]) => ({ evaluator_id: id, evaluator_name: s.name, scored: s.scores.length, failed: s.failed, ...summarize(s.scores) }));
  return { evaluators, overall: { scored: overall.length, ...summarize(overall) } };
}

export function report(
  summary: BatchSummary,
  ctx: { json: boolean; failUnder?: number; inputPath: string; outPath: string; judge: { id: string; name: string; evaluators: Array<{ id: string; name: string }> } },
): number {
  const threshold = ctx.failUnder ?? 0.5;
  const { evaluators, overall } = stats(summary.lines, ctx.judge.evaluators, threshold);
  const count = (s: ResultLine['status']) => summary.lines.filter((l) => l.status === s).length;
  const scored = count('ok');
  const skipped = count('skipped');
  const failed = count('error');
  const below = ctx.failUnder === undefined ? [] : evaluators.filter((e) => e.mean === null || e.mean < ctx.failUnder!);
  const evaluatorErrors = evaluators.reduce((n, e) => n + e.failed, 0);
  const gate = ctx.failUnder === undefined ? null : { threshold: ctx.failUnder, passed: below.length === 0, below: below.map((e) => e.evaluator_name) };

  let exitCode: number = EXIT.ok;
  if (summary.stop) exitCode = summary.stop.exitCode;
  else if (gate && !gate.passed) exitCode = EXIT.gate;
  else if (skipped || failed || evaluatorErrors) exitCode = EXIT.partial;

  if (ctx.json) {
    printJson({
      judge: { id: ctx.judge.id, name: ctx.judge.name },
      input: ctx.inputPath,
      out: ctx.outPath,
      rows: summary.lines.length,
      scored,
      scored_now: summary.scoredNow,
      resumed: summary.resumed,
      skipped,
      failed,
      retries: summary.retries,
      elapsed_s: summary.elapsedMs / 1000,
      pass_threshold: threshold,
      evaluators,
      overall,
      gate,
      stopped: summary.stop?.message ?? null,
      exit_code: exitCode,
    });
  } else {
    const f = (n: number | null) => (n === null ? '-' : n.toFixed(2));
    const pct = (n: number | null) => (n === null ? '-' : `${(n * 100).toFixed(1)}%`);
    console.log(
      `\nJudge ${ctx.judge.name} (${ctx.judge.id}): ${scored} row(s) scored${summary.resumed ? ` (${summary.resumed} from the earlier run)` : ''}` +
        `${skipped ? `, ${skipped} bad row(s) skipped` : ''}${failed ? `, ${failed} refused by the server` : ''}.`,
    );
    console.log(
      table(
        ['EVALUATOR', 'SCORED', 'MEAN', 'MIN', `PASS (>= ${threshold})`, ...(evaluatorErrors ? ['FAILED'] : [])],
        [
          ...evaluators.map((e) => [e.evaluator_name, e.scored, f(e.mean), f(e.min), pct(e.pass_rate), ...(evaluatorErrors ? [e.failed] : [])]),
          ['(row mean)', overall.scored, f(overall.mean), f(overall.min), pct(overall.pass_rate), ...(evaluatorErrors ? [''] : [])],
        ],
        ['l', 'r', 'r', 'r', 'r', 'r'],
      ),
    );
    const rate = summary.scoredNow && summary.elapsedMs ? `, ${(summary.scoredNow / (summary.elapsedMs / 1000)).toFixed(1)} rows/s` : '';
    console.log(`Results: ${ctx.outPath}  (${formatSeconds(summary.elapsedMs / 1000)}${rate}${summary.retries ? `, ${summary.retries} retries` : ''})`);
    if (gate) {
      console.log(
        gate.passed
          ? `Gate passed: every evaluator's mean is at least ${gate.threshold}.`
          : `Gate FAILED: ${below.map((e) => `${e.evaluator_name} mean ${f(e.mean)}`).join(', ')} below ${gate.threshold}.`,
      );
    }
  }
  if (summary.stop) throw new CliError(summary.stop.exitCode, summary.stop.message);
  if (exitCode === EXIT.partial) {
    const parts = [skipped ? `${skipped} bad` : '', failed ? `${failed} refused by the server` : '', evaluatorErrors ? `${evaluatorErrors} evaluator result(s) failed` : ''].filter(
      Boolean,
    );
    const rowsNotScored = skipped + failed;
    console.error(
      `note: ${rowsNotScored ? `${rowsNotScored} row(s) were not scored` : 'some evaluators failed'} (${parts.join(', ')}; see "error" in ${ctx.outPath}); exit code ${EXIT.partial}.`,
    );
  }
  return exitCode;
}
