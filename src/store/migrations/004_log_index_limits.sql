-- Tribunal schema, version 4: every index row stays within PostgreSQL's limit.
--
-- A btree entry must fit in a third of a page (about 2,700 bytes). Migration 2 INCLUDEd the tags
-- and evaluator_ids arrays in the organization's log index, so a log with a few long tags, many
-- tags, or a judge of many evaluators could not be inserted ("index row size exceeds maximum"),
-- after every model call of the run was paid for. Those two arrays grow with the input; they leave
-- the btree and are served by their GIN indexes (execution_logs_by_tags, execution_logs_by_evaluator),
-- whose entries are single tags and ids. A tag is bounded by TRIBUNAL_MAX_TAG_CHARS (at most 500
-- characters, 2,000 bytes), ids are the server's own. The remaining INCLUDEd columns are fixed-size
-- or server-made ids.
CREATE INDEX execution_logs_by_org_bounded ON execution_logs (org_id, created_at DESC, id DESC)
  INCLUDE (judge_id, project_id, score, cost_usd);
DROP INDEX execution_logs_by_org_covering;
