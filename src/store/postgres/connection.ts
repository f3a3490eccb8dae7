// The PostgreSQL store's connection: the pool, start-up (waiting for the database, migrations),
// statements, transactions, and the mapping of driver errors to the store's errors. One connection
// is shared by every part of the store (postgres-store.ts assembles them over it).
//
// - An unreachable database becomes StoreUnavailableError (the server answers 503). The pool opens
//   fresh connections on demand, so the store recovers by itself when the database returns. Reads,
//   and any statement whose connection could not even be opened, are retried briefly first.
// - A unique violation becomes StoreConflictError with the reason the caller's mapping names.
import pg from 'pg';
import { migrateSchema } from '../migrate-schema.ts';
import { StoreConflictError, StoreUnavailableError, type ConflictReason } from '../types.ts';
import { decodeRow, encodeParam, type Row } from './codecs.ts';
import { log } from '../../log.ts';

export interface PostgresStoreOptions {
  connectionString: string;
  /** Most connections this process opens (default 10). */
  poolMax?: number;
  /** How long a request waits for a connection before the store counts as unavailable (default 5 s). */
  connectTimeoutMs?: number;
  /**
   * How long one statement may wait for its answer before the store counts as unavailable
   * (default 30 s). A database that stopped answering without closing the connection (a hung
   * server, a silent network partition) is noticed this way; every indexed query takes milliseconds.
   */
  queryTimeoutMs?: number;
  /** How long init waits for the database to come up (default 15 s). */
  startupWaitMs?: number;
  /** Run the schema migrations at init (default true). */
  migrate?: boolean;
  /** How long this process's budget reservations outlive it (default 60 s; renewed while it lives). */
  budgetLeaseMs?: number;
}

/** SQL text, or a statement prepared by name once per connection (its text must never change under the same name). */
export type Statement = string | { name: string; text: string };

export type Queryable = { query: (sql: string, params?: unknown[]) => Promise<pg.QueryResult<Row>> };

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ECONNABORTED',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, shutting down)
  '53300', // too_many_connections
]);
const CONNECTION_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|not queryable|Connection closed|read ECONNRESET|Query read timeout/i;

/** True for errors that say the database could not be reached, not that a statement was wrong. */
export function isConnectionError(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (CONNECTION_CODES.has(code) || code.startsWith('08'))) return true;
  if (err instanceof AggregateError) return err.errors.some(isConnectionError);
  return CONNECTION_MESSAGES.test((err as Error).message ?? '');
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class PgConnection {
  readonly pool: pg.Pool;
  private closed = false;

  constructor(private readonly opts: PostgresStoreOptions) {
    this.pool = new pg.Pool({
      connectionString: opts.connectionString,
      max: opts.poolMax ?? 10,
      connectionTimeoutMillis: opts.connectTimeoutMs ?? 5000,
      idleTimeoutMillis: 30_000,
      query_timeout: opts.queryTimeoutMs ?? 30_000,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      application_name: 'tribunal',
    });
    // A pooled connection that dies while idle (database restart) is dropped by the pool and
    // reported here; without a listener Node would treat it as an uncaught error and exit.
    this.pool.on('error', () => {});
    this.pool.on('connect', (client) => client.on('error', () => {}));
  }

  get budgetLeaseMs(): number {
    return this.opts.budgetLeaseMs ?? 60_000;
  }

  async init(): Promise<void> {
    const deadline = Date.now() + (this.opts.startupWaitMs ?? 15_000);
    for (let attempt = 0; ; attempt++) {
      let client: pg.PoolClient | undefined;
      try {
        client = await this.pool.connect();
        if (this.opts.migrate !== false) await migrateSchema(client);
        client.release();
        return;
      } catch (err) {
        client?.release(isConnectionError(err) ? (err as Error) : undefined);
        if (!isConnectionError(err)) {
          await this.pool.end().catch(() => {});
          throw err;
        }
        if (Date.now() >= deadline) {
          await this.pool.end().catch(() => {});
          throw new StoreUnavailableError(`Cannot reach PostgreSQL at ${describeUrl(this.opts.connectionString)}: ${(err as Error).message}`, { cause: err });
        }
        if (attempt === 0) log.warn(`waiting for PostgreSQL at ${describeUrl(this.opts.connectionString)} (${(err as Error).message})`);
        await sleep(Math.min(200 * 2 ** attempt, 2000));
      }
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }

  async ping(): Promise<void> {
    await this.query('SELECT 1', [], { retries: 0 });
  }

  /** Maps a driver error to the store's errors: unreachable -> StoreUnavailableError, unique -> StoreConflictError. */
  storeError(err: unknown, conflict?: (constraint: string) => ConflictReason): unknown {
    if (err instanceof StoreUnavailableError || err instanceof StoreConflictError) return err;
    if (isConnectionError(err)) return new StoreUnavailableError(`PostgreSQL is unreachable: ${(err as Error).message}`, { cause: err });
    const e = err as { code?: string; constraint?: string };
    if (e.code === '23505' && conflict) return new StoreConflictError(conflict(e.constraint ?? ''));
    return err;
  }

  /** A pooled connection; a failure to connect is retried briefly (nothing was sent yet). */
  async connect(retries = 2): Promise<pg.PoolClient> {
    if (this.closed) throw new StoreUnavailableError('The store is closed.');
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.pool.connect();
      } catch (err) {
        if (!isConnectionError(err) || attempt >= retries) throw this.storeError(err);
        await sleep(50 * 4 ** attempt);
      }
    }
  }

  /**
   * One statement. `idempotent` statements (reads) are retried on a broken connection, e.g. a pooled
   * connection the database closed on restart; a write is not, since it may have been applied.
   */
  async query(sql: Statement, params: unknown[], opts: { idempotent?: boolean; retries?: number; conflict?: (c: string) => ConflictReason } = {}): Promise<pg.QueryResult<Row>> {
    const retries = opts.retries ?? 2;
    for (let attempt = 0; ; attempt++) {
      const client = await this.connect(retries);
      try {
        const values = params.map(encodeParam);
        // A named statement is parsed and planned once per connection (the driver remembers which it prepared).
        const result = await (typeof sql === 'string' ? client.query(sql, values) : client.query<Row>({ name: sql.name, text: sql.text, values }));
        client.release();
        result.rows.forEach(decodeRow);
        return result;
      } catch (err) {
        const broken = isConnectionError(err);
        client.release(broken ? (err as Error) : undefined);
        if (broken && (opts.idempotent ?? true) && attempt < retries) continue;
        throw this.storeError(err, opts.conflict);
      }
    }
  }

  write(sql: string, params: unknown[], conflict?: (c: string) => ConflictReason) {
    return this.query(sql, params, { idempotent: false, conflict });
  }

  /** Runs `fn` in a transaction; it commits unless `fn` throws or answers `{ rollback: value }`. */
  async transaction<T>(fn: (c: Queryable) => Promise<T | { rollback: T }>, conflict?: (c: string) => ConflictReason): Promise<T> {
    const client = await this.connect();
    const q: Queryable = {
      query: async (sql: string, params: unknown[] = []) => {
        const result = await client.query(sql, params.map(encodeParam));
        result.rows.forEach(decodeRow);
        return result;
      },
    };
    try {
      await client.query('BEGIN');
      const result = await fn(q);
      if (result && typeof result === 'object' && 'rollback' in result) {
        await client.query('ROLLBACK');
        client.release();
        return (result as { rollback: T }).rollback;
      }
      await client.query('COMMIT');
      client.release();
      return result as T;
    } catch (err) {
      const broken = isConnectionError(err);
      if (!broken) await client.query('ROLLBACK').catch(() => {});
      client.release(broken ? (err as Error) : undefined);
      throw this.storeError(err, conflict);
    }
  }

  async one<T>(sql: Statement, params: unknown[], fromRow: (r: Row) => T): Promise<T | null> {
    const { rows } = await this.query(sql, params);
    return rows[0] ? fromRow(rows[0]) : null;
  }

  /** Raw SQL for tools (migration checks, the benchmark); not used by the server. */
  sql(text: string, params: unknown[] = []) {
    return this.query(text, params, { idempotent: false });
  }
}

/** The database URL without its password, for messages. */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}
