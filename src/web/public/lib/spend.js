// Spend today against the organization's daily budget (room h-cost, GET /v1/budgets/): one line,
// filled in when the answer comes; an error leaves it out (the page works without it).
import { api } from './api.js';
import { h } from './dom.js';
import { fmtCost } from './ui.js';

export function spendLine() {
  const line = h('p', { class: 'muted', 'data-spend': '' });
  api('GET', '/v1/budgets/')
    .then((b) => {
      const cap = b.org.daily_cap_usd;
      line.textContent = `Spent today: ${fmtCost(b.org.spent_today_usd)}${cap === null ? ' (no daily budget)' : ` of a daily budget of ${fmtCost(cap)}`} · resets ${new Date(b.resets_at).toLocaleString()}`;
    })
    .catch(() => line.remove());
  return line;
}
