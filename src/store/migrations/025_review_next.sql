-- Tribunal schema, version 25: `next` of review queues in one round trip (issue 31; src/review/pg-review.ts).
--
-- The lease step used to be four statements from the server (BEGIN, the candidate with FOR UPDATE
-- SKIP LOCKED, the lease insert that checks again, COMMIT) after a read of the queue. On a busy
-- machine every round trip waits for a CPU twice, so this function does the same steps inside
-- PostgreSQL. The guarantees do not change: a VOLATILE function takes a fresh snapshot for each
-- statement (READ COMMITTED), so the insert, run once the candidate's row lock is held, still sees
-- a lease that the previous holder of that lock committed after the candidate query began.
--
-- The candidate query is written so that its plan stays flat however far the queue has progressed
-- (a plan cached inside the function is generic, and statistics lag behind a queue being worked):
--   - `queue_id >= q AND queue_id <= q` with ORDER BY queue_id, id (not `queue_id = q` and ORDER BY
--     id, which the primary key also serves): only the (queue_id, id) indexes give that order, so the
--     scan runs on review_items_open and never walks the done items the primary key still holds;
--   - one scalar subquery per candidate over that item's own leases (the primary key's item_id
--     prefix), not NOT EXISTS, which the planner turned into an anti join that read every lease of
--     the table for each call;
--   - no sequential scans (below).
--
-- review_next(queue, org, annotator, now, expires): the queue's record (no row at all when the queue
-- does not exist or, with `org` given, belongs to another organization) and the item leased, or
-- nulls when none is left for this annotator. `expires` null: now + the queue's lease_seconds.
-- The transaction commits without waiting for the WAL flush (a lease is soft state: a crash may
-- forget a lease of the last moment, which only hands that item out again).
CREATE FUNCTION review_next(p_queue text, p_org text, p_annotator text, p_now timestamptz, p_expires timestamptz)
RETURNS TABLE (
  queue_record json,
  item_id text,
  item_log_id text,
  item_source text,
  item_done integer,
  item_adjudicated_at timestamptz,
  item_created_at timestamptz,
  lease_expires_at timestamptz,
  lease_created_at timestamptz
)
LANGUAGE plpgsql VOLATILE
-- The function's plans are cached per connection, made once from the statistics of that moment:
-- a plan made while review_leases was small scans it whole for every candidate, and keeps doing so
-- as it grows. Every statement here has an index that serves it, so sequential scans are off.
SET enable_seqscan = off
AS $$
#variable_conflict use_column
DECLARE
  q json;
  wanted integer;
  expires timestamptz;
  passed text[] := '{}';
  cand review_items%ROWTYPE;
  lease review_leases%ROWTYPE;
BEGIN
  SELECT r.record INTO q FROM review_queues r WHERE r.id = p_queue AND (p_org IS NULL OR r.org_id = p_org);
  IF NOT FOUND THEN
    RETURN;
  END IF;
  wanted := (q ->> 'annotators_per_item')::integer;
  expires := coalesce(p_expires, p_now + make_interval(secs => (q ->> 'lease_seconds')::integer));
  PERFORM set_config('synchronous_commit', 'off', true);
  -- At most 20 candidates that turn out taken once locked (each is skipped for the next try).
  FOR attempt IN 1..20 LOOP
    SELECT i.* INTO cand FROM review_items i
     WHERE i.queue_id >= p_queue AND i.queue_id <= p_queue AND i.open AND i.id <> ALL (passed)
       AND (SELECT count(*) FILTER (WHERE l.annotator_id = p_annotator AND (l.state <> 'leased' OR l.expires_at > p_now)) = 0
                   AND i.done + count(*) FILTER (WHERE l.state = 'leased' AND l.expires_at > p_now) < wanted
              FROM review_leases l WHERE l.item_id = i.id)
     ORDER BY i.queue_id, i.id LIMIT 1 FOR UPDATE OF i SKIP LOCKED;
    IF NOT FOUND THEN
      EXIT;
    END IF;
    -- The lock is ours: this statement's own snapshot sees every lease committed before it.
    INSERT INTO review_leases (item_id, annotator_id, queue_id, state, expires_at, reason, created_at, updated_at)
    SELECT i.id, p_annotator, i.queue_id, 'leased', expires, NULL, p_now, p_now FROM review_items i
     WHERE i.id = cand.id AND i.open
       AND (SELECT count(*) FILTER (WHERE l.annotator_id = p_annotator AND (l.state <> 'leased' OR l.expires_at > p_now)) = 0
                   AND i.done + count(*) FILTER (WHERE l.state = 'leased' AND l.expires_at > p_now) < wanted
              FROM review_leases l WHERE l.item_id = i.id)
    ON CONFLICT (item_id, annotator_id) DO UPDATE SET state = 'leased', expires_at = EXCLUDED.expires_at, reason = NULL, updated_at = EXCLUDED.updated_at
    RETURNING review_leases.* INTO lease;
    IF FOUND THEN
      RETURN QUERY SELECT q, cand.id, cand.execution_log_id, cand.source, cand.done, cand.adjudicated_at, cand.created_at, lease.expires_at, lease.created_at;
      RETURN;
    END IF;
    passed := passed || cand.id;
  END LOOP;
  RETURN QUERY SELECT q, NULL::text, NULL::text, NULL::text, NULL::integer, NULL::timestamptz, NULL::timestamptz, NULL::timestamptz, NULL::timestamptz;
END
$$;
