-- The result cache (src/engine/result-cache.ts, docs/MODELS.md "Caching"): an evaluator result by
-- the key of what produced it (evaluator version, inputs, model, settings), scoped by organization:
-- the organization is part of the primary key and every lookup names it. `used` is a number from
-- one sequence, taken again on every hit: a put deletes every entry whose number is at least
-- TRIBUNAL_RESULT_CACHE_MAX below its own, so at most that many entries remain, the least recently
-- used going first.
CREATE SEQUENCE result_cache_use;
CREATE TABLE result_cache (
  org_id text NOT NULL,
  key text NOT NULL,
  used bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  result json NOT NULL,
  PRIMARY KEY (org_id, key)
);
CREATE INDEX result_cache_by_use ON result_cache (used);
