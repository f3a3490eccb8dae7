// The request context the core (domain/, engine/, generation/) works in: who is asking, the store,
// the configuration. The core owns this type; the tool contract (tool.ts) extends it with the
// services a handler reaches, so the core never depends on the tool layer.
import type { Caller } from './auth.ts';
import type { Config } from './config.ts';
import type { Store } from './store/types.ts';

/** Runs a unit of work inside a trace span when tracing is on (src/observability implements it). */
export interface SpanRunner {
  inSpan<T>(name: string, attributes: Record<string, string | number>, work: () => Promise<T>): Promise<T>;
}

export interface RequestContext {
  store: Store;
  config: Config;
  caller: Caller;
  /** Traces the units of a request (a tool, a store write); absent when tracing is off. */
  spans?: SpanRunner;
  /**
   * Set by an evaluation rule's run (src/traces/rules/run.ts): the run's log is written carried
   * (LogStore.appendExecutionLogCarried) and the run answers before it is on disk; this is handed
   * the promise of it (and of what must follow it: the review queues fed), to wait for before linking.
   */
  carryLog?: (written: Promise<void>) => void;
}
