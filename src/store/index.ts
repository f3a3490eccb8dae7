// Picks the store from configuration.
import type { Config } from '../config.ts';
import { JsonStore } from './json-store.ts';
import type { LockOwner } from './lock.ts';
import type { Store } from './types.ts';

export async function openStore(config: Config, opts: { role?: LockOwner['role']; adminSocket?: string } = {}): Promise<Store> {
  if (config.store === 'postgres') {
    throw new Error('TRIBUNAL_STORE=postgres is not available yet; use the default JSON store.');
  }
  const store = new JsonStore({ dataDir: config.dataDir, role: opts.role ?? 'server', adminSocket: opts.adminSocket });
  await store.init();
  return store;
}
