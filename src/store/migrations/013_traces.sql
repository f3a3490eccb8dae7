-- Tribunal schema, version 13: received OTLP spans and their evaluations (SPEC section 14).
--
-- A span is read whole, so it is one JSON document; the columns are what lists filter and sort on.
-- (org_id, trace_id, span_id) is unique: an exporter's retry of the same batch stores nothing twice.
CREATE TABLE trace_spans (
  org_id          text COLLATE "C" NOT NULL,
  trace_id        text COLLATE "C" NOT NULL,
  span_id         text COLLATE "C" NOT NULL,
  parent_span_id  text COLLATE "C",
  name            text NOT NULL,
  service_name    text,
  status_code     text NOT NULL,
  start_time      timestamptz NOT NULL,
  end_time        timestamptz NOT NULL,
  start_nanos     numeric NOT NULL,
  received_at     timestamptz NOT NULL,
  attributes      jsonb NOT NULL,
  record          json NOT NULL,
  PRIMARY KEY (org_id, trace_id, span_id)
);
CREATE INDEX trace_spans_by_start ON trace_spans (org_id, start_time DESC, trace_id DESC);
CREATE INDEX trace_spans_by_received ON trace_spans (org_id, received_at, trace_id, span_id);
CREATE INDEX trace_spans_retention ON trace_spans (start_time);

-- Spans held per organization, kept with each insert and delete, so the size cap is one row read.
CREATE TABLE trace_span_counts (
  org_id  text COLLATE "C" PRIMARY KEY,
  spans   bigint NOT NULL
);

CREATE TABLE trace_evaluations (
  org_id            text COLLATE "C" NOT NULL,
  trace_id          text COLLATE "C" NOT NULL,
  span_id           text COLLATE "C" NOT NULL,
  execution_log_id  text COLLATE "C" NOT NULL,
  created_at        timestamptz NOT NULL,
  record            json NOT NULL,
  PRIMARY KEY (org_id, trace_id, execution_log_id)
);

-- Evaluation rules, their counters (matched, sampled, done, failed, skipped:<reason>, day:<date>:runs)
-- and their work queue: one row per unit waiting or running (several instances take units with
-- FOR UPDATE SKIP LOCKED; a dead worker's unit is taken again once its lease ends). A unit leaves
-- the queue in the same transaction that counts its outcome.
CREATE TABLE evaluation_rules (
  id          text COLLATE "C" PRIMARY KEY,
  org_id      text COLLATE "C" NOT NULL,
  created_at  timestamptz NOT NULL,
  record      json NOT NULL
);
CREATE INDEX evaluation_rules_by_org ON evaluation_rules (org_id, created_at DESC);

CREATE TABLE evaluation_rule_counts (
  rule_id  text COLLATE "C" NOT NULL,
  key      text COLLATE "C" NOT NULL,
  n        double precision NOT NULL,
  PRIMARY KEY (rule_id, key)
);

CREATE TABLE evaluation_jobs (
  id           text COLLATE "C" PRIMARY KEY,
  rule_id      text COLLATE "C" NOT NULL,
  state        text NOT NULL,
  created_at   timestamptz NOT NULL,
  run_after    timestamptz NOT NULL,
  lease_until  timestamptz,
  record       json NOT NULL
);
CREATE INDEX evaluation_jobs_due ON evaluation_jobs (state, run_after);
CREATE INDEX evaluation_jobs_by_rule ON evaluation_jobs (rule_id, state, created_at);
