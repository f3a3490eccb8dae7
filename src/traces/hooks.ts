// Who hears of newly stored spans (the evaluation rules, src/traces/rules/): one listener per store,
// registered when the server's services start. Called after the spans are stored and before the exporter
// is answered (a 200 means the spans are queued); it never waits for a model, and its failures are logged.
import type { Caller } from '../auth.ts';
import type { Store } from '../store/types.ts';
import type { Span } from './types.ts';
import { log } from '../log.ts';

export type SpansListener = (caller: Caller, spans: Span[]) => Promise<void>;
const listeners = new WeakMap<Store, SpansListener>();

export function onSpansStored(store: Store, listener: SpansListener): void {
  listeners.set(store, listener);
}

/** Resolves once the rules have queued the spans (store writes only, never a model call). */
export async function notifySpansStored(store: Store, caller: Caller, spans: Span[]): Promise<void> {
  const l = listeners.get(store);
  if (!l) return;
  await l(caller, spans).catch((err) => log.error('traces: evaluation rules could not take new spans', { err }));
}

// Rule changes (create, update, delete), so that a worker's cached rules of the organization are read again.
const ruleListeners = new WeakMap<Store, (orgId: string) => void>();
export function onRulesChanged(store: Store, listener: (orgId: string) => void): void {
  ruleListeners.set(store, listener);
}
export function rulesChanged(store: Store, orgId: string): void {
  ruleListeners.get(store)?.(orgId);
}
