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
