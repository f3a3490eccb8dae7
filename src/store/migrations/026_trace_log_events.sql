-- Tribunal schema, version 26: GenAI events received as OTLP log records (POST /otel/v1/logs), e.g.
-- @opentelemetry/instrumentation-openai's gen_ai.user.message and gen_ai.choice with the message
-- content. Kept per span whether or not the span is stored yet, and merged into the span's events
-- when it is read, so the order in which an application's logs and spans arrive does not matter.
-- (org_id, trace_id, span_id, key) is unique: an exporter's retry stores nothing twice.
CREATE TABLE trace_log_events (
  org_id          text COLLATE "C" NOT NULL,
  trace_id        text COLLATE "C" NOT NULL,
  span_id         text COLLATE "C" NOT NULL,
  key             text COLLATE "C" NOT NULL,
  time_nanos      numeric NOT NULL,
  received_at     timestamptz NOT NULL,
  seq             integer NOT NULL,
  event           json NOT NULL,
  PRIMARY KEY (org_id, trace_id, span_id, key)
);
CREATE INDEX trace_log_events_retention ON trace_log_events (time_nanos);

-- Log events held per organization (their cap, TRIBUNAL_TRACE_MAX_LOG_RECORDS, is one row read).
CREATE TABLE trace_log_event_counts (
  org_id  text COLLATE "C" PRIMARY KEY,
  events  bigint NOT NULL
);
