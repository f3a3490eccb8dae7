-- Tribunal schema, version 8: batch runs (SPEC section 7).
--
-- A run's counters (done, failed, cost_usd) are columns moved in SQL by the statement that records a
-- row, so instances recording rows of one run at once never lose a count. A row is unique per
-- (batch_id, position): recording it a second time changes nothing, which is what keeps a row from
-- being counted twice after a crash or a retried job. Fields without a column live in `extra`.
CREATE TABLE batch_executions (
  id           text COLLATE "C" PRIMARY KEY,
  org_id       text COLLATE "C" NOT NULL,
  judge_id     text COLLATE "C",
  dataset_id   text COLLATE "C",
  status       text NOT NULL,
  total        integer NOT NULL,
  done         integer NOT NULL DEFAULT 0,
  failed       integer NOT NULL DEFAULT 0,
  cost_usd     double precision,
  created_at   timestamptz NOT NULL,
  extra        json NOT NULL DEFAULT '{}'
);
CREATE INDEX batch_executions_by_org ON batch_executions (org_id, created_at DESC, id DESC);
CREATE INDEX batch_executions_unfinished ON batch_executions (created_at) WHERE status IN ('queued', 'running');

CREATE TABLE batch_rows (
  batch_id  text COLLATE "C" NOT NULL REFERENCES batch_executions (id) ON DELETE CASCADE,
  position  integer NOT NULL,
  record    json NOT NULL,
  PRIMARY KEY (batch_id, position)
);

-- The items given in the request of an inline run (at most 1,000), in their order.
CREATE TABLE batch_items (
  batch_id  text COLLATE "C" NOT NULL REFERENCES batch_executions (id) ON DELETE CASCADE,
  position  integer NOT NULL,
  record    json NOT NULL,
  PRIMARY KEY (batch_id, position)
);

-- A log's batch is filtered on (the rows of a run, newest first). Like session_id (migration 005),
-- the record's own field travels in `extra` too, so a record reads back exactly as written.
ALTER TABLE execution_logs ADD COLUMN batch_execution_id text COLLATE "C";
CREATE INDEX execution_logs_by_batch ON execution_logs (org_id, batch_execution_id, created_at DESC, id DESC)
  WHERE batch_execution_id IS NOT NULL;
