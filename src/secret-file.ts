// The server secret out of the box (issue 26). TRIBUNAL_SECRET_KEY seals registered models' API keys
// (secret-box.ts). Without it:
// - on the embedded JSON store (one server, one data directory) the secret is kept in the data
//   directory's `secret.key`, made on first start (32 random bytes, base64; file mode 0600) and said
//   once in the log; a later start reads it. Backing up the data directory backs it up.
// - on PostgreSQL several instances must share one secret, which a file on one machine cannot give:
//   the variable stays required, and a start without it is refused when models with keys exist
//   (they could not be opened). Without models, registering one answers 503 with how to set it.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './config.ts';
import { MAKE_SECRET_HINT } from './secret-box.ts';
import type { Store } from './store/types.ts';

export const SECRET_FILE = 'secret.key';

const decode = (text: string): Buffer<ArrayBuffer> | null => {
  const v = text.trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(v)) return null;
  const bytes = Buffer.from(v, 'base64') as Buffer<ArrayBuffer>;
  return bytes.length === 32 ? bytes : null;
};

/** Where the secret came from, for the start-up lines and tests. */
export type SecretSource = 'env' | 'file' | 'created' | 'none';

/**
 * Sets `config.registry.secretKey` from the data directory's file when the variable is unset and
 * the store is JSON; refuses to start on PostgreSQL without the variable when sealed keys exist.
 */
export async function ensureServerSecret(config: Config, store: Pick<Store, 'kind'>, log: (line: string) => void = (l) => console.log(l)): Promise<SecretSource> {
  if (config.registry.secretKey) return 'env';
  if (store.kind === 'postgres') {
    const sealed = await countSealedModels(store);
    if (sealed > 0) {
      throw new Error(
        `TRIBUNAL_SECRET_KEY is not set, and ${sealed} registered model(s) keep an API key sealed with it: set the same secret on every instance and start again (make a new one with: ${MAKE_SECRET_HINT}; a new secret cannot open the stored keys, which then have to be set again with PATCH /v1/models/{id}/).`,
      );
    }
    return 'none';
  }
  const file = path.join(config.dataDir, SECRET_FILE);
  let text: string | null = null;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`${file} cannot be read (${(err as Error).message}).`);
  }
  if (text !== null) {
    const secret = decode(text);
    if (!secret) throw new Error(`${file} does not hold the base64 of 32 bytes: restore it from a backup, or set TRIBUNAL_SECRET_KEY.`);
    config.registry.secretKey = secret;
    return 'file';
  }
  const secret = randomBytes(32);
  fs.mkdirSync(config.dataDir, { recursive: true });
  try {
    // 'wx': never over a file another process made meanwhile; 0600: only this user reads it.
    fs.writeFileSync(file, `${secret.toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return ensureServerSecret(config, store, log);
    throw err;
  }
  config.registry.secretKey = secret;
  log(
    `Created ${file} (mode 0600): the secret that seals registered models' API keys. Back it up with the data directory; TRIBUNAL_SECRET_KEY overrides it (docs/DEPLOYMENT.md, "The server secret").`,
  );
  return 'created';
}

async function countSealedModels(store: Pick<Store, 'kind'>): Promise<number> {
  const sql = (store as unknown as { sql?: (text: string, params?: unknown[]) => Promise<{ rows: Array<{ n: number | string }> }> }).sql;
  if (!sql) return 0;
  const { rows } = await sql.call(store, `SELECT count(*) AS n FROM models WHERE (record->>'api_key_encrypted') IS NOT NULL`);
  return Number(rows[0]?.n ?? 0);
}
