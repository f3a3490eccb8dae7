-- Provider batches of batch runs in mode provider_batch (issue 32, src/batch/provider-*.ts): stored
-- before the submit call (status submitting, provider_batch_id null) and given the provider's id as
-- soon as it answers, so that a restarted server polls the same batch and never submits a row twice.
CREATE TABLE provider_batches (
  id text PRIMARY KEY,
  batch_id text NOT NULL,
  org_id text NOT NULL,
  provider text NOT NULL,
  account text NOT NULL,
  provider_batch_id text,
  status text NOT NULL,
  custom_ids jsonb NOT NULL,
  error text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX provider_batches_by_run ON provider_batches (batch_id, created_at);

-- Budget reservations per holder (one per server process, src/store/postgres/budgets.ts): a process
-- renews its holds while it lives; holds of a process gone (kill -9, a lost machine) expire after the
-- lease and are taken off their counters' reserved_usd by any instance, instead of blocking the cap
-- until the day ends.
CREATE TABLE budget_holds (
  holder text NOT NULL,
  org_id text NOT NULL,
  scope text NOT NULL,
  scope_id text NOT NULL,
  period text NOT NULL,
  amount_usd numeric(20, 9) NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (holder, org_id, scope, scope_id, period)
);
CREATE INDEX budget_holds_by_expiry ON budget_holds (expires_at);
