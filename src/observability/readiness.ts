// /readyz: whether a load balancer should send this instance traffic. Unready while shutting down
// (so it is drained before it stops) or while the store cannot be reached. Migrations are applied
// when the store opens, before the server listens, so a serving instance has them.
import type { RequestHandler } from 'express';
import type { Store } from '../store/types.ts';

export class Readiness {
  private stopping = false;

  get shuttingDown(): boolean {
    return this.stopping;
  }

  /** Called first thing on SIGTERM/SIGINT: /readyz answers 503 from then on. */
  beginShutdown(): void {
    this.stopping = true;
  }
}

export function readyzHandler(store: Store, readiness: Readiness): RequestHandler {
  return async (_req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    if (readiness.shuttingDown) {
      res.status(503).json({ status: 'shutting_down', store: { kind: store.kind } });
      return;
    }
    try {
      await store.ping();
      res.json({ status: 'ready', store: { kind: store.kind, status: 'up', migrations: 'applied' } });
    } catch {
      res.status(503).json({ status: 'unready', store: { kind: store.kind, status: 'down' } });
    }
  };
}
