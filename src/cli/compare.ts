// tribunal compare-responses: which of two responses better meets a judge's (or one evaluator's)
// rubrics, each evaluator asked in both orders (POST /v1/judges/:id/compare/, SPEC section 9).
import fs from 'node:fs';
import { runCommand, list, str, type Command, type Values } from './command.ts';
import { resolveId } from './client.ts';
import { EXIT, usageError } from './errors.ts';
import { clip, printJson, usd } from './output.ts';
import { readText } from './shared.ts';
import type { ComparisonResult } from '../schemas/comparison.ts'; // the wire type, from the zod schema (one source of truth)

type ComparisonAnswer = ComparisonResult;

/** A response flag's value: "-" is stdin, the path of an existing file is read, anything else is the text itself. */
export function responseText(value: string, flag: string): string {
  // A file's (or stdin's) final newline ends the file, not the response (issue 26).
  if (value === '-') return stripFinalNewline(readText('-', flag));
  let isFile = false;
  try {
    isFile = fs.statSync(value).isFile();
  } catch {
    isFile = false;
  }
  return isFile ? stripFinalNewline(readText(value, flag)) : value;
}

const stripFinalNewline = (text: string) => text.replace(/\r?\n$/, '');

function body(values: Values): Record<string, unknown> {
  const a = str(values.a);
  const b = str(values.b);
  if (a === undefined || b === undefined) throw usageError('--a and --b are both required: the two responses to compare (text, or a file path).');
  const request = str(values.request);
  const requestFile = str(values['request-file']);
  if (request !== undefined && requestFile !== undefined) throw usageError('give --request or --request-file, not both.');
  return {
    request: requestFile !== undefined ? stripFinalNewline(readText(requestFile, '--request-file')) : request,
    response_a: responseText(a, '--a'),
    response_b: responseText(b, '--b'),
    contexts: list(values.context),
    expected_output: str(values['expected-output']),
    tags: list(values.tag),
  };
}

const label = (p: string | null) => p ?? 'failed';

export function printComparison(title: string, r: ComparisonAnswer): void {
  const secs = `${(r.latency_ms / 1000).toFixed(1)} s`;
  console.log(`${title}: preference ${r.preference}  (a ${r.wins_a}, b ${r.wins_b}, ties ${r.ties}; ${usd(r.cost_usd)}, ${secs})  log ${r.execution_log_id}`);
  const width = Math.max(...r.evaluator_results.map((e) => e.evaluator_name.length));
  const room = process.stdout.isTTY ? Math.max(30, (process.stdout.columns ?? 120) - width - 26) : Infinity;
  for (const e of r.evaluator_results) {
    const how = e.preference === null ? '' : e.degenerate ? 'degenerate' : e.consistent ? 'consistent' : 'INCONSISTENT';
    const why = e.preference === null ? (e.error ?? '') : (e.justification ?? '');
    console.log(`  ${label(e.preference).padEnd(6)}  ${how.padEnd(12)}  ${e.evaluator_name.padEnd(width)}  ${clip(why, room)}`);
  }
}

const compareCommand: Command = {
  summary: 'which of two responses better meets a judge or an evaluator (both orders)',
  help: `Usage: tribunal compare-responses (--judge <j> | --evaluator <e>) --request <text> --a <file|text> --b <file|text>

Asks every evaluator which response better meets its rubric, twice: with a shown first and with b
shown first. When the two orders disagree the evaluator answers "tie" and is marked INCONSISTENT
(position bias). The comparison is kept as an execution log of type comparison.

  --judge <id|name>          compare with every evaluator of this judge
  --evaluator <id|name>      compare with one evaluator (a preset or your own)
  --a <file|text>            the first response: a file path is read, "-" reads stdin, else the text
  --b <file|text>            the second response, the same way
  --request <text>           the input both responses answer (or --request-file <path>)
  --request-file <path>      read the request from a file
  --context <text>           a retrieved snippet (repeat for several)
  --expected-output <text>   reference answer
  --tag <tag>                label stored on the log (repeat for several)`,
  options: {
    judge: { type: 'string' },
    evaluator: { type: 'string' },
    a: { type: 'string' },
    b: { type: 'string' },
    request: { type: 'string' },
    'request-file': { type: 'string' },
    context: { type: 'string', multiple: true },
    'expected-output': { type: 'string' },
    tag: { type: 'string', multiple: true },
  },
  async run({ values, json, client }) {
    const judge = str(values.judge);
    const evaluator = str(values.evaluator);
    if ((judge === undefined) === (evaluator === undefined)) throw usageError('give exactly one of --judge or --evaluator.');
    const payload = Object.fromEntries(Object.entries(body(values)).filter(([, v]) => v !== undefined));
    const kind = judge !== undefined ? 'judge' : 'evaluator';
    const id = await resolveId(client(), kind, (judge ?? evaluator)!);
    const result = await client().post<ComparisonAnswer>(`/v1/${kind}s/${encodeURIComponent(id)}/compare/`, payload);
    if (json) printJson(result);
    else printComparison(`Comparison with ${kind} ${judge ?? evaluator}`, result);
    return EXIT.ok;
  },
};

export const compareResponses = (argv: string[]) => runCommand('compare-responses', compareCommand, argv);
