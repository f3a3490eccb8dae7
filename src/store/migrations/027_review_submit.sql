-- Tribunal schema, version 27: a review submit and a skip in one round trip each (issue 31;
-- src/review/pg-review.ts).
--
-- A submit was six statements from the server (BEGIN, the lease check holding the item's row lock,
-- one INSERT per label, the lease update, the item update, COMMIT); on a busy machine each round trip
-- waits for a CPU twice. These functions do the same steps inside PostgreSQL, in the transaction of
-- the one statement that calls them, and commit durably (labels and completions are not soft state).
--
-- review_lease_check(queue, item, annotator, now): locks the item's row, then reads the annotator's
-- lease with a statement of its own. A VOLATILE function takes a fresh snapshot for each statement
-- (READ COMMITTED), so a submit that waited for the lock sees what the previous holder committed
-- (a lease it has just completed is 'done', never counted twice), which a check joined into the
-- locking statement would not: that statement's snapshot is taken before it waits.
-- Answers ok, no_item, not_leased, already_done, already_skipped or expired.
CREATE FUNCTION review_lease_check(p_queue text, p_item text, p_annotator text, p_now timestamptz)
RETURNS text
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
  lease_state text;
  live boolean;
BEGIN
  PERFORM 1 FROM review_items i WHERE i.id = p_item AND i.queue_id = p_queue FOR UPDATE;
  IF NOT FOUND THEN
    RETURN 'no_item';
  END IF;
  SELECT l.state, l.expires_at > p_now INTO lease_state, live FROM review_leases l WHERE l.item_id = p_item AND l.annotator_id = p_annotator;
  IF NOT FOUND THEN
    RETURN 'not_leased';
  END IF;
  RETURN CASE lease_state WHEN 'done' THEN 'already_done' WHEN 'skipped' THEN 'already_skipped' ELSE CASE WHEN live THEN 'ok' ELSE 'expired' END END;
END
$$;

-- review_submit(queue, item, annotator, now, annotators_per_item, labels): the labels (a JSON array
-- of review_labels rows) and the lease completed, all or nothing; answers the check's outcome.
CREATE FUNCTION review_submit(p_queue text, p_item text, p_annotator text, p_now timestamptz, p_wanted integer, p_labels json)
RETURNS text
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
  outcome text := review_lease_check(p_queue, p_item, p_annotator, p_now);
BEGIN
  IF outcome <> 'ok' THEN
    RETURN outcome;
  END IF;
  INSERT INTO review_labels (id, queue_id, item_id, execution_log_id, evaluator_id, annotator_id, score, note, created_at)
  SELECT x.id, x.queue_id, x.item_id, x.execution_log_id, x.evaluator_id, x.annotator_id, x.score, x.note, x.created_at
    FROM json_populate_recordset(NULL::review_labels, p_labels) x;
  UPDATE review_leases SET state = 'done', updated_at = p_now WHERE item_id = p_item AND annotator_id = p_annotator;
  UPDATE review_items SET done = done + 1, open = done + 1 < p_wanted WHERE id = p_item;
  RETURN 'ok';
END
$$;

-- review_skip(queue, item, annotator, now, reason): the lease becomes 'skipped' with the reason.
CREATE FUNCTION review_skip(p_queue text, p_item text, p_annotator text, p_now timestamptz, p_reason text)
RETURNS text
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
  result text;
BEGIN
  result := review_lease_check(p_queue, p_item, p_annotator, p_now);
  IF result = 'ok' THEN
    UPDATE review_leases SET state = 'skipped', reason = p_reason, updated_at = p_now WHERE item_id = p_item AND annotator_id = p_annotator;
  END IF;
  RETURN result;
END
$$;
