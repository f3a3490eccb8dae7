-- Tribunal schema, version 6: datasets and their items (SPEC section 7).
--
-- An item is read whole, so it is one JSON document; `seq` is its position (insertion order), the
-- order items are paged and batches read them in. item_count is kept with each write, in the same
-- transaction, so listing datasets never counts rows.
CREATE TABLE datasets (
  id           text COLLATE "C" PRIMARY KEY,
  org_id       text COLLATE "C" NOT NULL,
  project_id   text COLLATE "C" NOT NULL,
  name         text NOT NULL,
  description  text NOT NULL,
  item_count   integer NOT NULL DEFAULT 0,
  created_at   timestamptz NOT NULL,
  updated_at   timestamptz NOT NULL,
  extra        json NOT NULL DEFAULT '{}',
  CONSTRAINT datasets_org_name_key UNIQUE (org_id, name)
);
CREATE INDEX datasets_by_org ON datasets (org_id, created_at DESC, id DESC);

CREATE TABLE dataset_items (
  seq         bigserial PRIMARY KEY,
  id          text COLLATE "C" NOT NULL UNIQUE,
  dataset_id  text COLLATE "C" NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
  record      json NOT NULL
);
CREATE INDEX dataset_items_in_order ON dataset_items (dataset_id, seq);
