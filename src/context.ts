// The request context the core (domain/, engine/, generation/) works in: who is asking, the store,
// the configuration. The core owns this type; the tool contract (tool.ts) extends it with the
// services a handler reaches, so the core never depends on the tool layer.
import type { Caller } from './auth.ts';
import type { Config } from './config.ts';
import type { Store } from './store/types.ts';

export interface RequestContext {
  store: Store;
  config: Config;
  caller: Caller;
}
