// Pieces several command groups share: run inputs from flags, printing a run result, JSON files.
import fs from 'node:fs';
import type { Command, Values } from './command.ts';
import { list, str } from './command.ts';
import type { ApiClient } from './client.ts';
import { CliError, EXIT, usageError } from './errors.ts';
import { clip, printJson, score, usd } from './output.ts';
import type { ExecutionResult } from '../schemas/core.ts';

export const RUN_OPTIONS = {
  response: { type: 'string' },
  'response-file': { type: 'string' },
  request: { type: 'string' },
  context: { type: 'string', multiple: true },
  'expected-output': { type: 'string' },
  'user-id': { type: 'string' },
  tag: { type: 'string', multiple: true },
  attach: { type: 'string', multiple: true },
} as const;

export const RUN_HELP = `  --response <text>         the LLM output to evaluate (required, or --response-file)
  --response-file <path>    read the response from a file ("-" for stdin)
  --request <text>          the input that prompted it
  --context <text>          a retrieved snippet (repeat for several)
  --expected-output <text>  reference answer
  --user-id <id>            end user of the evaluated application
  --tag <tag>               label stored on the execution log (repeat for several)
  --attach <file_id>        a file from tribunal files upload, given to the judge model (repeat for several)`;

export function runInputFromFlags(values: Values): Record<string, unknown> {
  let response = str(values.response);
  const file = str(values['response-file']);
  if (response !== undefined && file !== undefined) throw usageError('give --response or --response-file, not both.');
  if (file !== undefined) response = readText(file, '--response-file');
  if (response === undefined) throw usageError('--response <text> (or --response-file <path>) is required: the LLM output to evaluate.');
  return {
    response,
    request: str(values.request),
    contexts: list(values.context),
    expected_output: str(values['expected-output']),
    user_id: str(values['user-id']),
    tags: list(values.tag),
    attachments: list(values.attach),
  };
}

export function readText(path: string, flag: string): string {
  try {
    return fs.readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (err) {
    throw usageError(`${flag}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}).`);
  }
}

/** A JSON object from a file, as the base of a create/update body (flags override its fields). */
export function readJsonObject(path: string | undefined, flag = '--file'): Record<string, unknown> {
  if (path === undefined) return {};
  const text = readText(path, flag);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw usageError(`${flag}: ${path} is not valid JSON (${(err as Error).message}).`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw usageError(`${flag}: ${path} must hold a JSON object.`);
  return value as Record<string, unknown>;
}

/** Drops undefined members so that PATCH bodies carry only what the user gave. */
export const defined = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/** What execute answers (a judge's or an evaluator's run): the wire type, from the zod schema. */
export type RunResult = ExecutionResult;

export function printRunResult(title: string, result: RunResult, json: boolean): void {
  if (json) return printJson(result);
  const secs = typeof result.latency_ms === 'number' ? `, ${(result.latency_ms / 1000).toFixed(1)} s` : '';
  console.log(`${title}: score ${score(result.score)}  (${usd(result.cost_usd)}${secs})  log ${result.execution_log_id}`);
  const width = Math.max(...result.evaluator_results.map((r) => r.evaluator_name.length));
  // Cut to the terminal's width only on a terminal: in a CI log or a file the whole text is wanted.
  const room = process.stdout.isTTY ? Math.max(30, (process.stdout.columns ?? 120) - width - 10) : Infinity;
  for (const r of result.evaluator_results) {
    const why = r.score === null ? `failed: ${r.error ?? 'no score'}` : (r.justification ?? '');
    console.log(`  ${score(r.score).padStart(4)}  ${r.evaluator_name.padEnd(width)}  ${clip(why, room)}`);
  }
}

export type Group = Record<string, Command>;

/**
 * A command about one record named by its one argument: one request, then the answer as JSON with
 * --json, else as `print` shows it to a person.
 */
export function oneRequestCommand<T>(summary: string, help: string, request: (api: ApiClient, ref: string) => Promise<T>, print: (answer: T, ref: string) => void): Command {
  return {
    summary,
    help,
    positionals: [1, 1],
    async run({ positionals, json, client }) {
      const answer = await request(client(), positionals[0]);
      if (json) printJson(answer);
      else print(answer, positionals[0]);
      return EXIT.ok;
    },
  };
}

/**
 * The server names a missing input by its REST field (`contexts`); at the command line it is a
 * flag (issue 26): the message says --context, --expected-output or --request instead.
 */
const FLAG_FOR_FIELD: Array<[RegExp, string]> = [
  [/as `contexts` \(a list of strings\)/g, 'with --context <text> (repeat for several)'],
  [/`contexts`/g, '--context'],
  [/as `expected_output`/g, 'with --expected-output <text>'],
  [/`expected_output`/g, '--expected-output'],
  [/as `request` \(or a conversation as `turns`\)/g, 'with --request <text>'],
  [/`request`/g, '--request'],
];

export function inFlagTerms(err: unknown): unknown {
  if (!(err instanceof CliError) || err.code !== 'missing_field') return err;
  const message = FLAG_FOR_FIELD.reduce((m, [field, flag]) => m.replace(field, flag), err.message);
  return new CliError(err.exitCode, message, { code: err.code, status: err.status, body: err.body });
}
