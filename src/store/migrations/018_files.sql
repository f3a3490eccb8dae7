-- Tribunal schema, version 18: attachments (SPEC section 16). One row per (organization, file); the
-- id comes from the bytes, so the same bytes in two organizations are two rows. The bytes are bytea:
-- at most 20 MB a file, read whole when a run needs them.
CREATE TABLE files (
  org_id        text COLLATE "C" NOT NULL,
  id            text COLLATE "C" NOT NULL,
  name          text NOT NULL,
  content_type  text NOT NULL,
  bytes         integer NOT NULL,
  sha256        text NOT NULL,
  created_at    timestamptz NOT NULL,
  data          bytea NOT NULL,
  PRIMARY KEY (org_id, id)
);
-- PNG, JPEG, WebP and PDF are compressed already: store the bytes out of line without trying again.
ALTER TABLE files ALTER COLUMN data SET STORAGE EXTERNAL;
CREATE INDEX files_by_org_created ON files (org_id, created_at DESC, id DESC);
