-- Budgets (room h-cost, src/budgets/, docs/COST.md): cost caps per organization, evaluator or batch
-- run, and the spend counted against them per period (a UTC day, or 'total'). A run reserves its
-- estimate with one conditional UPDATE (spent + reserved below the cap) and settles its real cost
-- with another, so instances sharing the database never overspend together by more than one run each.
CREATE TABLE budget_caps (
  org_id text NOT NULL,
  scope text NOT NULL,
  scope_id text NOT NULL,
  period text NOT NULL,
  cap_usd numeric(20, 9) NOT NULL,
  PRIMARY KEY (org_id, scope, scope_id)
);
CREATE TABLE budget_counters (
  org_id text NOT NULL,
  scope text NOT NULL,
  scope_id text NOT NULL,
  period text NOT NULL,
  spent_usd numeric(20, 9) NOT NULL DEFAULT 0,
  reserved_usd numeric(20, 9) NOT NULL DEFAULT 0,
  PRIMARY KEY (org_id, scope, scope_id, period)
);
CREATE INDEX budget_counters_by_period ON budget_counters (period, scope);
