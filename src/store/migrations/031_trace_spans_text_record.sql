-- Tribunal schema, version 31: less PostgreSQL work per received span (issue 28, src/store/postgres/traces.ts).
--
-- The record is the span's JSON as Tribunal wrote it (JSON.stringify). As json, PostgreSQL parsed
-- every record on the way in only to validate it, about a tenth of the backend's work per span; as
-- text it is stored as it comes, and read paths parse it in Node as before (node-pg parsed json
-- columns the same way). A json value keeps its input text exactly, so record::text loses nothing.
ALTER TABLE trace_spans ALTER COLUMN record TYPE text USING record::text;

-- A record past about 2 KB (a span with its prompt and completion) is compressed as it is stored;
-- lz4 (PostgreSQL 14+, when built with it) takes about a third less backend CPU per span than the
-- default pglz on 7 KB records. New values only; records stored before stay readable as they are.
-- Where lz4 is not there (an older server, a build without it) the default stays.
DO $$
BEGIN
  EXECUTE 'ALTER TABLE trace_spans ALTER COLUMN record SET COMPRESSION lz4';
EXCEPTION WHEN syntax_error OR feature_not_supported OR invalid_parameter_value OR undefined_object THEN
  NULL;
END
$$;
