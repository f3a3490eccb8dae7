// tribunal migrate --from json --to postgres: copy a JSON data directory into PostgreSQL, counted and
// verified (src/store/migrate-json.ts). Server-side: needs no API key; the server must be stopped
// (the JSON directory's lock says so otherwise).
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import { describeUrl } from '../store/postgres-store.ts';
import { usageError } from './errors.ts';
import { withCommandName } from './invocation.ts';

const MIGRATE_USAGE = `Usage: tribunal migrate --from json --to postgres [--data-dir <dir>] [--database-url <url>] [--json]

Copies everything in a JSON data directory (organizations, API keys, projects, evaluators and judges
with every version, execution logs, registered models, annotations, datasets with their items, batch
runs with their rows, calibration runs, attachments with their bytes, claim tokens, synthetic data,
budget caps and counters, provider batches, review queues with their items, leases and labels,
evaluation rules with their counters and waiting units, spans with their evaluations) into
PostgreSQL, then reads each record back and compares it. Not copied: the result cache (disposable)
and budget reservations (runs in flight; the report lists any). Records already in PostgreSQL are
kept, so an interrupted run can be run again. A batch run left queued or running, and a rule's
waiting units, resume on PostgreSQL.

  --data-dir <dir>        the JSON data directory (default: TRIBUNAL_DATA_DIR, else .tribunal-data)
  --database-url <url>    the PostgreSQL database (default: DATABASE_URL)
  --json                  print the report as JSON

Stop the server that uses the data directory first. Exit code 0 when every record verified, 1 if not.`;

export async function migrate(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        from: { type: 'string' },
        to: { type: 'string' },
        'data-dir': { type: 'string' },
        'database-url': { type: 'string' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw usageError(`${(err as Error).message.split('. To specify')[0]}. See tribunal migrate --help.`);
  }
  if (values.help) {
    console.log(withCommandName(MIGRATE_USAGE));
    return 0;
  }
  if (values.from !== 'json' || values.to !== 'postgres') {
    throw usageError('migrate copies a JSON data directory into PostgreSQL: give --from json --to postgres. See tribunal migrate --help.');
  }
  const env = { ...process.env };
  if (values['data-dir']) env.TRIBUNAL_DATA_DIR = values['data-dir'];
  if (values['database-url']) env.DATABASE_URL = values['database-url'];
  // The source store is JSON whatever TRIBUNAL_STORE says; the target is the database URL.
  const config = loadConfig({ ...env, TRIBUNAL_STORE: 'json' });
  if (!config.databaseUrl) throw usageError('No PostgreSQL database: give --database-url postgres://... or set DATABASE_URL.');
  const { migrateJsonToPostgres, formatReport } = await import('../store/migrate-json.ts');
  const { migrateRooms } = await import('./migrate-rooms.ts');
  const log = values.json ? () => {} : (line: string) => console.error(line);
  log(`Migrating ${config.dataDir} -> ${describeUrl(config.databaseUrl)}`);
  const report = await migrateJsonToPostgres({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, log, rooms: migrateRooms });
  console.log(values.json ? JSON.stringify(report) : formatReport(report));
  return report.ok ? 0 : 1;
}
