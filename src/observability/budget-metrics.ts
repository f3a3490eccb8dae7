// Budgets in /metrics (room h-cost): each organization's spend today and its daily cap, read from the
// store when /metrics is scraped (so every instance reports the shared PostgreSQL counters alike).
import { Gauge, type Registry } from 'prom-client';
import { dayOf } from '../budgets/budgets.ts';
import type { Store } from '../store/types.ts';

export function watchBudgets(registry: Registry, store: Store): void {
  if (registry.getSingleMetric('tribunal_org_spend_today_usd')) return;
  new Gauge({
    name: 'tribunal_org_spend_today_usd',
    help: 'USD spent by each organization today (UTC), counted against its daily budget; models without a price count 0.',
    labelNames: ['org_id'],
    registers: [registry],
    async collect() {
      this.reset();
      const counters = await store.listBudgetCounters({ period: dayOf(), scope: 'org' }).catch(() => []);
      for (const c of counters) this.set({ org_id: c.org_id }, c.spent_usd);
    },
  });
}
