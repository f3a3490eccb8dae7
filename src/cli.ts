// The `tribunal` command: a small dispatcher. Each command lives in its own module under src/cli/
// and is loaded on first use, so a client command never loads the server. Client commands talk to
// a server over REST (TRIBUNAL_URL, TRIBUNAL_API_KEY); server-side ones (serve, keys) work on the
// store. Every failure ends as one line on stderr and an exit code (src/cli/errors.ts, docs/CLI.md).
import { CliError, EXIT } from './cli/errors.ts';
import { withCommandName } from './invocation.ts';

type Handler = (argv: string[]) => Promise<number>;

const COMMANDS: Record<string, Handler> = {
  // Server-side commands (work on the server's store).
  migrate: async (argv) => (await import('./cli/migrate.ts')).migrate(argv),
  serve: async (argv) => (await import('./cli/serve.ts')).serveCommand(argv),
  keys: async (argv) => (await import('./cli/keys.ts')).keys(argv),
  // Client commands (REST).
  'demo-key': async (argv) => (await import('./cli/demo-key.ts')).demoKey(argv),
  judges: async (argv) => (await import('./cli/judges.ts')).judges(argv),
  evaluators: async (argv) => (await import('./cli/evaluators.ts')).evaluators(argv),
  projects: async (argv) => (await import('./cli/projects.ts')).projects(argv),
  datasets: async (argv) => (await import('./cli/datasets.ts')).datasets(argv),
  logs: async (argv) => (await import('./cli/logs.ts')).logs(argv),
  models: async (argv) => (await import('./cli/models.ts')).models(argv),
  files: async (argv) => (await import('./cli/files.ts')).files(argv), // h-attach
  batch: async (argv) => (await import('./cli/batch.ts')).batch(argv),
  eval: async (argv) => (await import('./cli/eval.ts')).evalBatch(argv),
  'compare-responses': async (argv) => (await import('./cli/compare.ts')).compareResponses(argv),
  calibrate: async (argv) => (await import('./cli/calibrate.ts')).calibrate(argv),
  annotate: async (argv) => (await import('./cli/calibrate.ts')).annotate(argv),
  traces: async (argv) => (await import('./cli/traces.ts')).traces(argv), // h-traces
  rules: async (argv) => (await import('./cli/traces.ts')).rules(argv), // h-traces
};

const USAGE = `Usage: tribunal <command> [options]

Client commands (talk to a server: TRIBUNAL_URL, default http://127.0.0.1:8787, and TRIBUNAL_API_KEY;
--url and --api-key override):
  demo-key                                  get a temporary demo key and print the lines to export
  judges list|get|create|update|delete|run|generate|export|import|duplicate|claim|synth|proxy-url
                                            find, edit, run and generate judges; keep them as files;
                                            the judge proxy's URL with client snippets
  evaluators list|get|create|update|delete|run
                                            find, edit and run evaluators (presets included)
  projects list|create                      projects of your organization
  datasets create|list|import|export|delete stored inputs to run judges over (JSONL/CSV import, streamed)
  logs list|get                             past runs (execution logs), with every filter
  models list|add|verify|delete             your organization's own judge models (keys via --key-env)
  files upload|list|delete                  attachments: images and PDFs for --attach on run commands
  batch run|status|list|results|cancel|compare
                                            judge a stored dataset on the server (--wait, --fail-under);
                                            compare two runs (--fail-on-regression)
  eval --judge <j> --input <data.jsonl|csv> --out <results.jsonl> [--server]
                                            score a whole dataset; --fail-under makes it a CI gate
  compare-responses --judge <j> --request <text> --a <file|text> --b <file|text>
                                            which of two responses is better, asked in both orders
  calibrate --judge <j> --dataset <d> [--min-kappa 0.6]
                                            measure a judge against human labels; a CI gate
  annotate <log> --evaluator <e> --score <0..1> [--note ...]
                                            say what score an evaluator should have given
  traces list|get                           traces received on /otel/v1/traces, with their scores
  rules list|get|create|update|delete|test|backfill|status
                                            evaluation rules: judge received spans online

Server-side commands (work on the server's store; TRIBUNAL_DATA_DIR / TRIBUNAL_STORE / DATABASE_URL):
  serve                                     start the server (same as npm start)
  keys create|list|revoke --org <name>      organizations and their API keys, without a key
  migrate --from json --to postgres [--data-dir D] [--database-url U]
                                            copy a JSON data directory into PostgreSQL, verified

Every command takes --help, and --json for machine-readable output. Exit codes: docs/CLI.md.`;

/** Options every client command takes; given before the command they apply to it. */
const GLOBAL_VALUE_FLAGS = new Set(['--url', '--api-key', '--timeout']);
const GLOBAL_BOOLEAN_FLAGS = new Set(['--json']);

/**
 * `tribunal --url U judges list` -> the command and its arguments with the leading global flags
 * moved behind the command words (parseArgs reads them anywhere before a `--`).
 */
export function hoistGlobalFlags(argv: string[]): { command: string | undefined; rest: string[] } {
  const globals: string[] = [];
  let i = 0;
  while (i < argv.length) {
    const arg = argv[i];
    const name = arg.split('=')[0];
    if (GLOBAL_VALUE_FLAGS.has(name)) {
      const take = arg.includes('=') ? 1 : 2;
      globals.push(...argv.slice(i, i + take));
      i += take;
    } else if (GLOBAL_BOOLEAN_FLAGS.has(arg)) {
      globals.push(arg);
      i++;
    } else break;
  }
  const [command, ...rest] = argv.slice(i);
  const end = rest.indexOf('--');
  return { command, rest: end < 0 ? [...rest, ...globals] : [...rest.slice(0, end), ...globals, ...rest.slice(end)] };
}

/** The known command closest to a mistyped one (at most two edits, or a prefix), if any. */
export function closest(word: string, known: string[]): string | undefined {
  const distance = (a: string, b: string) => {
    let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      const row = [i];
      for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = row;
    }
    return prev[b.length];
  };
  const scored = known.map((k) => ({ k, d: k.startsWith(word) && word.length >= 2 ? 0 : distance(word, k) })).sort((x, y) => x.d - y.d);
  return scored[0] && scored[0].d <= Math.min(2, Math.floor(word.length / 2)) ? scored[0].k : undefined;
}

export async function main(argv: string[]): Promise<number> {
  const { command, rest } = hoistGlobalFlags(argv);
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    console.log(withCommandName(USAGE));
    return EXIT.ok;
  }
  if (command === '--version' || command === '-v') {
    console.log((await import('./version.ts')).VERSION);
    return EXIT.ok;
  }
  const handler = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!handler) {
    const what = command.startsWith('-') ? `unknown option ${command}` : `unknown command ${JSON.stringify(command)}`;
    const guess = command.startsWith('-') ? undefined : closest(command, Object.keys(COMMANDS));
    console.error(withCommandName(`error: ${what}${guess ? ` (did you mean "${guess}"?)` : ''}. See tribunal --help.`));
    return EXIT.usage;
  }
  try {
    return await handler(rest);
  } catch (err) {
    // The reader of stdout went away (`| head`): what it read is what it wanted (issue 26).
    if ((err as NodeJS.ErrnoException)?.code === 'EPIPE') return EXIT.ok;
    if (err instanceof CliError) {
      console.error(withCommandName(`error: ${err.message}`));
      return err.exitCode;
    }
    // Server-side commands fail with plain errors (exit 1); anything else is a bug: one line, and
    // the stack only when asked for.
    console.error(`error: ${(err as Error)?.message ?? String(err)}`);
    if (process.env.TRIBUNAL_DEBUG) console.error((err as Error)?.stack);
    return 1;
  }
}
