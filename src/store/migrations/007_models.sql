-- The per-organization model registry (SPEC section 11). The record is one JSON document; its API
-- key is inside only as AES-256-GCM ciphertext sealed with TRIBUNAL_SECRET_KEY (src/secret-box.ts),
-- so a dump of this table never holds a usable key.
CREATE TABLE models (
  id text PRIMARY KEY,
  org_id text NOT NULL,
  name text NOT NULL,
  created_at timestamptz NOT NULL,
  record json NOT NULL,
  CONSTRAINT models_unique_name UNIQUE (org_id, name)
);
CREATE INDEX models_by_org ON models (org_id, created_at DESC, id DESC);
