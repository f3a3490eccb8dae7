-- Tribunal schema, version 30: review leases and `next` read only the index meant for them, whatever the
-- statistics say (issue 31; src/review/pg-review.ts, migrations/025_review_next.sql, 027_review_submit.sql).
--
-- review_next's candidate query asks for `queue_id >= q AND queue_id <= q AND open ORDER BY queue_id, id`
-- so that it would run on review_items_open (queue_id, id) WHERE open, which holds only the items still
-- wanting people. But review_items_by_queue was the same key, (queue_id, id), over every item: it
-- gives the same order, and the two cost the same whenever the statistics still say that the items
-- are open (a queue analyzed when it was filled, then worked). The function's cached generic plan
-- then took review_items_by_queue about as often as not (seen with auto_explain: 10,649 rows removed
-- by the filter, 5,920 buffers, 2.8 ms for one `next` after 10,000 items were done), and walked
-- every done item of the queue on every call: a cost that grows with the queue's history.
--
-- review_items_by_queue becomes (queue_id, id DESC). Read backwards it still gives a queue's items
-- by ascending id, which is what its readers ask for (listItems: `queue_id = $1 ORDER BY id`, where
-- queue_id is a constant), but it cannot give the candidate query's `ORDER BY queue_id, id` over a
-- range of queue_id: only review_items_open can, so the plan no longer depends on the statistics.
DROP INDEX review_items_by_queue;
CREATE INDEX review_items_by_queue ON review_items (queue_id, id DESC);

-- review_leases_by_queue was (queue_id, item_id). A submit, a skip and next's per-item check look a
-- lease up by item_id (and annotator_id), which the primary key (item_id, annotator_id) serves. But
-- an index can also be read whole for a condition on its second column, and when review_leases was
-- analyzed while empty (a new database, or the bench's ANALYZE before its first lease) that looked as
-- cheap: the submit's two lease lookups each read the whole of review_leases_by_queue (auto_explain,
-- 10,000 leases: 305 buffers, 0.7 ms each, against 0.012 ms on the primary key). Its readers ask by
-- queue only (deleting a queue; listLeases also gives item_ids, which the primary key serves), so it
-- becomes (queue_id): no lookup by item can use it.
DROP INDEX review_leases_by_queue;
CREATE INDEX review_leases_by_queue ON review_leases (queue_id);
