-- Tribunal schema, version 29: less work per stored span (issue 28, src/store/postgres/traces.ts).
--
-- The attributes column was a jsonb copy of what the record already holds, parsed again for every
-- span received and read only by the list's attribute filter, which now reads the record's
-- attributes instead. Existing rows stay readable: every record holds its span's attributes.
ALTER TABLE trace_spans DROP COLUMN attributes;

-- Retention prunes per organization over trace_spans_by_start (org_id, start_time, ...), so the index
-- on start_time alone is one index fewer to write per span. Pruning walks the organizations of
-- trace_span_counts; every insert writes its organization's row, and this adds any that is missing.
DROP INDEX trace_spans_retention;
INSERT INTO trace_span_counts (org_id, spans) SELECT org_id, count(*) FROM trace_spans GROUP BY org_id ON CONFLICT (org_id) DO NOTHING;
