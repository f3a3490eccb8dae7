-- Tribunal schema, version 16: review queues (SPEC section 17; src/review/).
--
-- A queue is read whole (one JSON document). Its items, the people's leases on them and the labels
-- they gave are rows: `next` finds the oldest open item with FOR UPDATE SKIP LOCKED, and every
-- change to an item's leases happens while its row is locked, so several instances never hand one
-- item to more people than the queue asks for.
CREATE TABLE review_queues (
  id          text COLLATE "C" PRIMARY KEY,
  org_id      text COLLATE "C" NOT NULL,
  created_at  timestamptz NOT NULL,
  record      json NOT NULL
);
CREATE INDEX review_queues_by_org ON review_queues (org_id, created_at DESC, id DESC);

CREATE TABLE review_items (
  id                text COLLATE "C" PRIMARY KEY,
  queue_id          text COLLATE "C" NOT NULL REFERENCES review_queues (id) ON DELETE CASCADE,
  execution_log_id  text COLLATE "C" NOT NULL,
  source            text NOT NULL,
  done              integer NOT NULL DEFAULT 0,
  open              boolean NOT NULL DEFAULT true,
  adjudicated_at    timestamptz,
  created_at        timestamptz NOT NULL,
  CONSTRAINT review_items_queue_log_key UNIQUE (queue_id, execution_log_id)
);
CREATE INDEX review_items_by_queue ON review_items (queue_id, id);
-- What `next` walks: only the items still wanting people.
CREATE INDEX review_items_open ON review_items (queue_id, id) WHERE open;

CREATE TABLE review_leases (
  item_id       text COLLATE "C" NOT NULL REFERENCES review_items (id) ON DELETE CASCADE,
  annotator_id  text COLLATE "C" NOT NULL,
  queue_id      text COLLATE "C" NOT NULL,
  state         text NOT NULL,
  expires_at    timestamptz NOT NULL,
  reason        text,
  created_at    timestamptz NOT NULL,
  updated_at    timestamptz NOT NULL,
  PRIMARY KEY (item_id, annotator_id)
);
CREATE INDEX review_leases_by_queue ON review_leases (queue_id, item_id);

CREATE TABLE review_labels (
  id                text COLLATE "C" PRIMARY KEY,
  queue_id          text COLLATE "C" NOT NULL,
  item_id           text COLLATE "C" NOT NULL REFERENCES review_items (id) ON DELETE CASCADE,
  execution_log_id  text COLLATE "C" NOT NULL,
  evaluator_id      text COLLATE "C" NOT NULL,
  annotator_id      text COLLATE "C" NOT NULL,
  score             double precision NOT NULL,
  note              text,
  created_at        timestamptz NOT NULL,
  CONSTRAINT review_labels_once UNIQUE (item_id, evaluator_id, annotator_id)
);
CREATE INDEX review_labels_by_queue ON review_labels (queue_id, evaluator_id);
