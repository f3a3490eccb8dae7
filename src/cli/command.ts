// The small frame every client command runs in: node:util parseArgs with the global options
// (--url, --api-key, --json, --help, --timeout), a help text per command, and a group dispatcher
// (`tribunal judges list ...`). No CLI framework: parseArgs covers what these commands need.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ApiClient, resolveClientOptions } from './client.ts';
import { usageError } from './errors.ts';
import { withCommandName } from '../invocation.ts';

type Options = NonNullable<ParseArgsConfig['options']>;

const GLOBAL_OPTIONS = {
  url: { type: 'string' },
  'api-key': { type: 'string' },
  timeout: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies Options;

const GLOBAL_HELP = `Global options:
  --url <url>          server URL (default: TRIBUNAL_URL, else http://127.0.0.1:8787)
  --api-key <key>      API key (default: TRIBUNAL_API_KEY)
  --timeout <seconds>  per-request timeout (default 600)
  --json               machine-readable JSON on stdout
  -h, --help           this help`;

export type Values = Record<string, string | boolean | string[] | undefined>;

interface CommandContext {
  values: Values;
  positionals: string[];
  json: boolean;
  /** The REST client, built on first use from --url/--api-key and the environment. */
  client(): ApiClient;
}

export interface Command {
  /** One line for the group's help. */
  summary: string;
  /** Full help: usage line and options (the global options are appended). */
  help: string;
  options?: Options;
  /** [min, max] positional arguments. */
  positionals?: [number, number];
  run(ctx: CommandContext): Promise<number>;
}

function parseCommandArgs(args: string[], options: Options, allowPositionals: boolean) {
  try {
    return parseArgs({ args, options: { ...GLOBAL_OPTIONS, ...options }, allowPositionals, strict: true });
  } catch (err) {
    const message = (err as Error).message.split('. To specify a positional')[0];
    throw usageError(`${message.replace(/\.$/, '')}. See --help.`);
  }
}

export async function runCommand(name: string, command: Command, args: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, command.options ?? {}, (command.positionals?.[1] ?? 0) > 0);
  if (values.help) {
    console.log(withCommandName(`${command.help}\n\n${GLOBAL_HELP}`));
    return 0;
  }
  const [min, max] = command.positionals ?? [0, 0];
  if (positionals.length < min) throw usageError(`tribunal ${name}: missing argument. Usage:\n${command.help.split('\n')[0]}`);
  if (positionals.length > max) throw usageError(`tribunal ${name}: unexpected argument ${JSON.stringify(positionals[max])} (quote text that has spaces). See --help.`);
  let client: ApiClient | undefined;
  return command.run({
    values: values as Values,
    positionals,
    json: Boolean(values.json),
    client: () => (client ??= new ApiClient(resolveClientOptions(values as { url?: string; 'api-key'?: string; timeout?: string }))),
  });
}

export async function runGroup(group: string, summary: string, commands: Record<string, Command>, argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const help = () =>
    `Usage: tribunal ${group} <command> [options]\n\n${summary}\n\nCommands:\n${Object.entries(commands)
      .map(([n, c]) => `  ${n.padEnd(10)} ${c.summary}`)
      .join('\n')}\n\nRun tribunal ${group} <command> --help for its options.`;
  if (!sub || sub === '--help' || sub === '-h' || sub === 'help') {
    console.log(withCommandName(help()));
    return sub ? 0 : 2;
  }
  const command = Object.hasOwn(commands, sub) ? commands[sub] : undefined;
  if (!command) throw usageError(`unknown command "tribunal ${group} ${sub}" (${Object.keys(commands).join(', ')}). See tribunal ${group} --help.`);
  return runCommand(`${group} ${sub}`, command, rest);
}

// Helpers for option values.
export const str = (v: Values[string]): string | undefined => (typeof v === 'string' ? v : undefined);
export const list = (v: Values[string]): string[] | undefined => (Array.isArray(v) ? v : typeof v === 'string' ? [v] : undefined);

export function num(v: Values[string], flag: string, range: { min?: number; max?: number; integer?: boolean } = {}): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  const ok =
    typeof v === 'string' &&
    v.trim() !== '' &&
    Number.isFinite(n) &&
    (!range.integer || Number.isInteger(n)) &&
    (range.min === undefined || n >= range.min) &&
    (range.max === undefined || n <= range.max);
  if (!ok) {
    const what = range.integer ? 'a whole number' : 'a number';
    const bounds = range.min !== undefined && range.max !== undefined ? ` from ${range.min} to ${range.max}` : range.min !== undefined ? ` of at least ${range.min}` : '';
    throw usageError(`--${flag} must be ${what}${bounds} (got ${JSON.stringify(v)}).`);
  }
  return n;
}

export function oneOf<T extends string>(v: Values[string], flag: string, allowed: readonly T[]): T | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !allowed.includes(v as T)) throw usageError(`--${flag} must be one of ${allowed.join(', ')} (got ${JSON.stringify(v)}).`);
  return v as T;
}
