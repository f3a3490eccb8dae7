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
}
