// Picks the store from configuration.
import type { Config } from '../config.ts';
import { JsonStore } from './json-store.ts';
import type { LockOwner } from './lock.ts';
import type { Store } from './types.ts';

export async function openStore(config: Config, opts: { role?: LockOwner['role']; adminSocket?: string } = {}): Promise<Store> {
  if (config.store === 'postgres') {
    // Imported on demand so that JSON-only installs never load the PostgreSQL driver.
    const { PostgresStore } = await import('./postgres-store.ts');
    const store = new PostgresStore({ connectionString: config.databaseUrl!, poolMax: config.pgPoolMax });
    await store.init();
    return store;
  }
  const store = new JsonStore({ dataDir: config.dataDir, role: opts.role ?? 'server', adminSocket: opts.adminSocket });
  await store.init();
  return store;
}
