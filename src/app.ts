// Wires the services a server needs from a config and an open store.
import type { Config } from './config.ts';
import { syncPresets } from './domain/presets.ts';
import { unavailableEngine } from './engine/unavailable.ts';
import { unavailableGenerator } from './generation/unavailable.ts';
import type { Store } from './store/types.ts';
import type { Services } from './tool.ts';

export async function buildServices(config: Config, store: Store): Promise<Services> {
  await syncPresets(store);
  return { config, store, engine: unavailableEngine, generator: unavailableGenerator };
}
