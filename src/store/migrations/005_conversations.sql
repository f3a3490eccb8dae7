-- Tribunal schema, version 5: conversations (SPEC section 10).
--
-- A log's turns and system_prompt are read whole and live in `extra` like any field without a
-- column. session_id is filtered on, so it gets a column; the record's own session_id stays in
-- `extra` too, so a record reads back exactly as it was written. Logs written before this migration
-- that carried a session_id in `extra` get the column filled.
ALTER TABLE execution_logs ADD COLUMN session_id text COLLATE "C";
UPDATE execution_logs SET session_id = extra->>'session_id'
  WHERE extra->>'session_id' IS NOT NULL AND length(extra->>'session_id') <= 200;
-- A session's runs, newest first (the session_id filter), and the distinct session ids of an
-- organization by prefix (GET /v1/execution-logs/session-ids/?starts_with=): session ids are at most
-- 200 characters (checked before any model call), so every index row fits.
CREATE INDEX execution_logs_by_session ON execution_logs (org_id, session_id, created_at DESC, id DESC)
  WHERE session_id IS NOT NULL;
-- The distinct user ids of an organization by prefix (GET /v1/execution-logs/user-ids/). user_id
-- had no length limit before this release; the index covers the ids within the new 200-character
-- limit, and only those are listed (the JSON store lists the same).
CREATE INDEX execution_logs_user_ids ON execution_logs (org_id, (user_id COLLATE "C"))
  WHERE user_id IS NOT NULL AND length(user_id) <= 200;
