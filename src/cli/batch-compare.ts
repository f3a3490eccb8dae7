// tribunal batch compare A B: an experiment (SPEC section 9). The server pairs the two runs' rows by
// item and answers per evaluator the two means, the difference with its 95% paired-bootstrap
// interval, wins and ties; this prints it, and --fail-on-regression turns it into a CI gate.
import { num, type Command } from './command.ts';
import { EXIT } from './errors.ts';
import { printJson, table } from './output.ts';
import type { Comparison } from '../batch/experiments.ts';
import type { BatchExecution } from '../schemas/batches.ts';

/** A compared run as the answer names it: part of the run's wire type (the zod schema). */
type RunRef = Pick<BatchExecution, 'id' | 'judge_id' | 'judge_version' | 'dataset_id' | 'status' | 'total'>;

/** GET /v1/judges/batch-executions/compare/: the server's comparison (batch/experiments.ts) and the two runs. */
export type ComparisonAnswer = Comparison & { a: RunRef; b: RunRef };

const f = (n: number | null) => (n === null ? '-' : n.toFixed(3));
const signed = (n: number | null) => (n === null ? '-' : `${n >= 0 ? '+' : ''}${n.toFixed(3)}`);
const VERDICT = { improved: 'better', regressed: 'WORSE', unclear: 'no clear change', no_pairs: 'no pairs' } as const;

export function printComparison(c: ComparisonAnswer): void {
  const run = (r: ComparisonAnswer['a']) => `${r.id} (judge ${r.judge_id ?? '-'}${r.judge_version ? ` v${r.judge_version}` : ''}, ${r.status}, ${r.total} rows)`;
  console.log(`A: ${run(c.a)}\nB: ${run(c.b)}`);
  console.log(
    `${c.pairs} pair(s) by ${c.paired_by === 'item_id' ? 'dataset item' : 'position'}${c.unpaired_a || c.unpaired_b ? ` (unpaired: ${c.unpaired_a} in A, ${c.unpaired_b} in B)` : ''}; ` +
      `delta = B - A with a ${Math.round(c.confidence * 100)}% paired-bootstrap interval (${c.resamples} resamples).\n`,
  );
  const line = (name: string, e: ComparisonAnswer['overall']) => [
    name,
    e.n,
    f(e.mean_a),
    f(e.mean_b),
    signed(e.delta),
    e.ci_low === null ? '-' : `[${signed(e.ci_low)}, ${signed(e.ci_high)}]`,
    `${e.wins_a}/${e.wins_b}/${e.ties}`,
    VERDICT[e.verdict],
  ];
  console.log(
    table(
      ['EVALUATOR', 'N', 'MEAN A', 'MEAN B', 'DELTA', '95% CI', 'A/B/TIE', 'VERDICT'],
      [...c.evaluators.map((e) => line(e.evaluator_name, e)), line('(row score)', c.overall)],
      ['l', 'r', 'r', 'r', 'r', 'l', 'r', 'l'],
    ),
  );
  if (c.only_in_a.length) console.log(`Only in A (not compared): ${c.only_in_a.map((e) => e.evaluator_name).join(', ')}`);
  if (c.only_in_b.length) console.log(`Only in B (not compared): ${c.only_in_b.map((e) => e.evaluator_name).join(', ')}`);
  if (c.moved.length) {
    console.log('\nItems that moved most:');
    console.log(
      table(
        ['ITEM', 'A', 'B', 'DELTA', 'LOG A', 'LOG B'],
        c.moved.map((m) => [m.item_id ?? `#${m.position_a}`, f(m.score_a), f(m.score_b), signed(m.delta), m.execution_log_id_a ?? '-', m.execution_log_id_b ?? '-']),
        ['l', 'r', 'r', 'r'],
      ),
    );
  }
}

export const compareCommand: Command = {
  summary: 'compare two batch runs over the same dataset (an experiment); can gate CI',
  help: `Usage: tribunal batch compare <batch A> <batch B> [--fail-on-regression] [--top N]

Pairs the rows of two finished runs by dataset item (or by position, for runs over given items)
and prints per evaluator the means of A and B, delta = B - A with a 95% paired-bootstrap interval,
how often A or B scored higher, and the items that moved most.

  --fail-on-regression     exit 1 when any evaluator's interval lies wholly below 0 (B worse)
  --top <n>                items that moved most to show (default 10, at most 100)`,
  options: { 'fail-on-regression': { type: 'boolean' }, top: { type: 'string' } },
  positionals: [2, 2],
  async run({ values, positionals, json, client }) {
    const [a, b] = positionals;
    const top = num(values.top, 'top', { min: 0, max: 100, integer: true });
    const c = await client().get<ComparisonAnswer>('/v1/judges/batch-executions/compare/', { a, b, top });
    const worse = c.evaluators.filter((e) => e.verdict === 'regressed');
    const exitCode = values['fail-on-regression'] && worse.length ? EXIT.gate : EXIT.ok;
    if (json) printJson({ ...c, regressions: worse.map((e) => e.evaluator_name), exit_code: exitCode });
    else {
      printComparison(c);
      if (values['fail-on-regression']) {
        console.log(
          worse.length
            ? `\nRegression: ${worse.map((e) => `${e.evaluator_name} ${signed(e.delta)} [${signed(e.ci_low)}, ${signed(e.ci_high)}]`).join(', ')}.`
            : '\nNo regression: no evaluator is clearly worse in B.',
        );
      }
    }
    return exitCode;
  },
};
