-- Tribunal schema, version 15: claim tokens of demo judges and a judge's synthetic test data
-- (SPEC section 16). Both are read whole, so each is one JSON document beside the columns used to find it.
CREATE TABLE claim_tokens (
  token_hash  text COLLATE "C" PRIMARY KEY,
  org_id      text COLLATE "C" NOT NULL,
  used_at     timestamptz,
  record      json NOT NULL
);
CREATE INDEX claim_tokens_by_org ON claim_tokens (org_id);

CREATE TABLE synthetic_data (
  judge_id  text COLLATE "C" PRIMARY KEY,
  org_id    text COLLATE "C" NOT NULL,
  status    text NOT NULL,
  record    json NOT NULL
);
CREATE INDEX synthetic_data_pending ON synthetic_data (judge_id) WHERE status = 'pending';
CREATE INDEX synthetic_data_by_org ON synthetic_data (org_id);
