// The estimate before a batch run (room h-cost, docs/COST.md): `tribunal batch run` asks the server
// for a dry_run first and prints it; a large run (over TRIBUNAL_CONFIRM_CALLS calls, default 1000, or
// over $TRIBUNAL_CONFIRM_USD, default 1) waits for a yes on a terminal, and without one needs --yes.
import type { ApiClient } from './client.ts';
import { EXIT, CliError } from './errors.ts';
import { printJson, usd } from './output.ts';
import { confirm, isInteractive } from './prompt.ts';
import type { z } from 'zod';
import type { CostEstimateSchema } from '../budgets/dry-run.ts';

/** The dry_run answer: the wire type, from the zod schema (one source of truth). */
export type Estimate = z.infer<typeof CostEstimateSchema>;

export const ESTIMATE_OPTIONS = { 'dry-run': { type: 'boolean' }, yes: { type: 'boolean' }, budget: { type: 'string' } } as const;
export const ESTIMATE_HELP = `  --dry-run                print the estimate (calls, tokens, cost live / cached / provider
                           batch) and run nothing; no model is called
  --yes                    skip the question asked before a large run
  --budget <usd>           the run's total cost cap: it stops once its rows have spent it`;

export function printEstimate(e: Estimate, json: boolean): void {
  if (json) return printJson(e);
  console.log(`Estimate: ${e.calls} model calls, ~${e.input_tokens} input and ~${e.output_tokens} output tokens.`);
  console.log(`  cost live ${usd(e.cost_usd.live)}, with prompt caching ${usd(e.cost_usd.cached)}, with provider batches ${usd(e.cost_usd.provider_batch)}`);
}

const large = (e: Estimate, env: NodeJS.ProcessEnv) => e.calls > Number(env.TRIBUNAL_CONFIRM_CALLS ?? 1000) || (e.cost_usd.live ?? 0) > Number(env.TRIBUNAL_CONFIRM_USD ?? 1);

/**
 * Answers true to go on. With --dry-run the estimate is printed and the run does not start; a large
 * run needs a yes (asked on a terminal) or --yes.
 */
export async function estimateFirst(api: ApiClient, path: string, body: Record<string, unknown>, opts: { dryRun: boolean; yes: boolean; json: boolean }): Promise<boolean> {
  if (opts.yes && !opts.dryRun) return true;
  const estimate = await api.post<Estimate>(path, { ...body, dry_run: true });
  if (opts.dryRun) {
    printEstimate(estimate, opts.json);
    return false;
  }
  if (!large(estimate, process.env)) return true;
  printEstimate(estimate, false);
  if (!isInteractive()) throw new CliError(EXIT.usage, 'This is a large run: pass --yes to start it without being asked (or --dry-run to see the estimate only).');
  if (await confirm('Start this run?')) return true;
  throw new CliError(EXIT.interrupted, 'Not started.');
}
