-- Tribunal schema, version 20: the OpenTelemetry trace and span a run judged (SPEC section 14,
-- write-back), as execution log filters (?trace_id=, ?span_id=) and the link from a log to its trace.
--
-- Like session_id (migration 005), the columns are for filtering only: the record's own trace_id and
-- span_id travel in `extra`, so a record reads back exactly as it was written (absent when the run
-- judged no span). Logs written before this release carried them as `trace_id:`/`span_id:` tags and
-- keep those tags; they are not copied into the columns (the JSON store cannot do the same).
ALTER TABLE execution_logs ADD COLUMN trace_id text COLLATE "C", ADD COLUMN span_id text COLLATE "C";
-- A trace's evaluations, newest first (the trace page and ?trace_id=).
CREATE INDEX execution_logs_by_trace ON execution_logs (org_id, trace_id, created_at DESC, id DESC)
  WHERE trace_id IS NOT NULL;
-- ?span_id= without the trace.
CREATE INDEX execution_logs_by_span ON execution_logs (org_id, span_id, created_at DESC, id DESC)
  WHERE span_id IS NOT NULL;
