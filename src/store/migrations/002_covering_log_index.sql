-- Tribunal schema, version 2: the organization's log index covers every filtered column.
--
-- A newest-first page of logs with filters is found by walking (org_id, created_at, id) and
-- testing each entry against the filters. With the filtered columns INCLUDEd, PostgreSQL tests them
-- in the index itself (an index-only scan, using the visibility map that autovacuum keeps) instead
-- of reading each candidate row from the table; only the page's own rows are then read whole (the
-- store asks for the page's ids first, then joins). Measured with 1,000,000 logs, this roughly
-- halves the first page of combined and multi-tag filters (docs/BENCHMARKS.md).
CREATE INDEX execution_logs_by_org_covering ON execution_logs (org_id, created_at DESC, id DESC)
  INCLUDE (judge_id, project_id, score, cost_usd, tags, evaluator_ids);
DROP INDEX execution_logs_by_org;
