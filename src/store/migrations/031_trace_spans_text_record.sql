-- Tribunal schema, version 31: less PostgreSQL work per received span (issue 28, src/store/postgres/traces.ts).
--
-- The record is the span's JSON as Tribunal wrote it (JSON.stringify). As json, PostgreSQL parsed
-- every record on the way in only to validate it, about a tenth of the backend's work per span; as
-- text it is stored as it comes, and read paths parse it in Node as before (node-pg parsed json
-- columns the same way). A json value keeps its input text exactly, so record::text loses nothing.
--
-- trace_spans_by_received served listSpans (rule test panel, backfill) with every sort key in the
-- index; (org_id, received_at) is enough to find a page in order (the spans of one arrival sorted by
-- id on the way out), and a narrower key is cheaper to write for every span. Dropped before the
-- table is rewritten, so it is built once.
DROP INDEX trace_spans_by_received;
ALTER TABLE trace_spans ALTER COLUMN record TYPE text USING record::text;
CREATE INDEX trace_spans_by_received ON trace_spans (org_id, received_at);
