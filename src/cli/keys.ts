// tribunal keys create|list|revoke: server-side key management on the server's store (no API key
// needed; see src/key-commands.ts). An unknown organization or key exits 5 (not found), like every
// other command; bad arguments exit 2.
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import { KeyCommandError, type CreatedKey, type KeyCommand } from '../key-commands.ts';
import { keyCommand as runOnStore } from './key-store.ts';
import type { ApiKey } from '../schemas.ts';
import { CliError, EXIT, usageError } from './errors.ts';
import { withCommandName } from '../invocation.ts';
import { describeStore, otherServerWarning } from './store-notice.ts';

/** Runs a key command, turning its refusals into the CLI's exit codes. */
async function keyCommand(config: ReturnType<typeof loadConfig>, cmd: KeyCommand): Promise<unknown> {
  try {
    return await runOnStore(config, cmd);
  } catch (err) {
    if (err instanceof KeyCommandError) throw new CliError(err.code === 'not_found' ? EXIT.notFound : EXIT.usage, err.message);
    throw err;
  }
}

const KEYS_USAGE = `Usage: tribunal keys <create|list|revoke> --org <name> [options]

Server-side: works on the server's store (TRIBUNAL_DATA_DIR / TRIBUNAL_STORE / DATABASE_URL), through
the running server when it owns the data directory. Needs no API key.

  keys create --org <name> [--name <label>] [--expires-in-days N]
                  make an organization (if new) and an API key; prints the key once
  keys list --org <name>
                  list an organization's keys (never their secrets)
  keys revoke --org <name> --key <id|prefix>
                  revoke a key
  keys budget --org <name> [--daily-usd <usd>|none]
                  show (or set) the organization's daily cost cap and today's spend;
                  none: back to TRIBUNAL_ORG_DAILY_BUDGET_USD

  --json          machine-readable output`;

const KEYS_OPTIONS = {
  org: { type: 'string' },
  name: { type: 'string' },
  key: { type: 'string' },
  'expires-in-days': { type: 'string' },
  'daily-usd': { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', default: false },
} as const;

function parseKeysArgs(args: string[]) {
  try {
    return parseArgs({ args, options: KEYS_OPTIONS, strict: true });
  } catch (err) {
    throw usageError(`${(err as Error).message.split('. To specify')[0]}. See tribunal keys --help.`);
  }
}

/** Names the store written (stderr, so that --json stays clean) and warns when a server runs elsewhere. */
async function sayWhere(config: ReturnType<typeof loadConfig>): Promise<void> {
  console.error(describeStore(config));
  const warning = await otherServerWarning(config);
  if (warning) console.error(warning);
}

export async function keys(argv: string[]): Promise<number> {
  const sub = argv[0]?.startsWith('-') ? undefined : argv[0];
  const args = sub === undefined ? argv : argv.slice(1);
  const { values } = parseKeysArgs(args);
  if (values.help || !sub) {
    console.log(withCommandName(KEYS_USAGE));
    return values.help ? 0 : 2;
  }
  if (!values.org) {
    console.error('error: --org <name> is required');
    return 2;
  }
  const config = loadConfig();
  if (!['create', 'list', 'revoke', 'budget'].includes(sub)) {
    console.error(`error: unknown keys command ${JSON.stringify(sub)} (create, list, revoke, budget)`);
    return 2;
  }
  try {
    if (sub === 'create') {
      const days = values['expires-in-days'] ? Number(values['expires-in-days']) : undefined;
      if (days !== undefined && !(Number.isInteger(days) && days > 0)) {
        console.error('error: --expires-in-days must be a positive whole number');
        return 2;
      }
      const made = (await keyCommand(config, { op: 'create', org: values.org, name: values.name, expires_in_days: days })) as CreatedKey;
      if (values.json) console.log(JSON.stringify(made));
      else {
        console.log(`${made.created_organization ? 'Created organization' : 'Organization'} ${made.organization_name} (${made.organization_id}).`);
        console.log(`New API key ${made.key.prefix} (${made.key.id}); it is shown only now:\n\n  ${made.api_key}\n`);
        console.log(`Use it as: export TRIBUNAL_API_KEY=<the key above>   and send   Authorization: Api-Key $TRIBUNAL_API_KEY`);
      }
      return 0;
    }
    if (sub === 'list') {
      const list = (await keyCommand(config, { op: 'list', org: values.org })) as ApiKey[];
      if (values.json) console.log(JSON.stringify(list));
      else
        for (const k of list)
          console.log(
            `${k.id}  ${k.prefix}  ${k.name}  created ${k.created_at}  ${k.revoked_at ? `revoked ${k.revoked_at}` : k.expires_at ? `expires ${k.expires_at}` : 'active'}`,
          );
      return 0;
    }
    // Budgets (room h-cost): an organization's own daily cap.
    if (sub === 'budget') {
      const given = values['daily-usd'];
      const daily = given === undefined ? undefined : given === 'none' ? null : Number(given);
      if (typeof daily === 'number' && !(Number.isFinite(daily) && daily >= 0)) {
        console.error('error: --daily-usd is a number of USD, 0 or more, or none');
        return 2;
      }
      const st = (await keyCommand(config, { op: 'budget', org: values.org, ...(daily !== undefined ? { daily_usd: daily } : {}) })) as {
        org: { daily_cap_usd: number | null; spent_today_usd: number; cap_source: string };
        resets_at: string;
      };
      if (values.json) console.log(JSON.stringify(st));
      else
        console.log(
          `${values.org}: daily cap ${st.org.daily_cap_usd === null ? 'none' : `$${st.org.daily_cap_usd}`} (${st.org.cap_source.replace('_', ' ')}), spent today $${st.org.spent_today_usd}; resets at ${st.resets_at}.`,
        );
      return 0;
    }
    if (sub === 'revoke') {
      if (!values.key) {
        console.error('error: --key <id or prefix> is required');
        return 2;
      }
      const key = (await keyCommand(config, { op: 'revoke', org: values.org, key: values.key })) as ApiKey;
      console.log(values.json ? JSON.stringify(key) : `Revoked ${key.prefix} (${key.id}).`);
      return 0;
    }
  } finally {
    // Also after a failure: "no organization named acme" is most often the wrong store.
    await sayWhere(config);
  }
  return 2;
}
