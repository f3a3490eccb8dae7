-- Tribunal schema, version 1.
--
-- What a query filters or sorts on is a real column with an index; what is only ever read whole
-- (rubrics' demonstrations, a judge's evaluator list, per-evaluator results, old versions) is a
-- JSON document. Those columns are `json`, not `jsonb`: json keeps the text as written, key order
-- included, so a record reads back exactly as the JSON store gives it (code that compares
-- serialized documents, like the preset sync, sees no change where there is none).
-- `extra` keeps any field a newer release adds to a record, so nothing is dropped on the way through.
-- Ids use the "C" collation so that ordering by id is bytewise, the same as the JSON store's.
-- No foreign keys: logs outlive the judges and evaluators they ran (deletes keep history), and the
-- store contract is the same on both stores.

CREATE TABLE organizations (
  id          text COLLATE "C" PRIMARY KEY,
  name        text NOT NULL,
  is_demo     boolean NOT NULL,
  created_at  timestamptz NOT NULL,
  extra       json NOT NULL DEFAULT '{}'
);
CREATE INDEX organizations_by_name ON organizations (name, created_at, id) WHERE NOT is_demo;

CREATE TABLE api_keys (
  id            text COLLATE "C" PRIMARY KEY,
  org_id        text COLLATE "C" NOT NULL,
  name          text NOT NULL,
  prefix        text COLLATE "C" NOT NULL UNIQUE,
  hash          text NOT NULL,
  created_at    timestamptz NOT NULL,
  expires_at    timestamptz,
  last_used_at  timestamptz,
  revoked_at    timestamptz,
  extra         json NOT NULL DEFAULT '{}'
);
CREATE INDEX api_keys_by_org ON api_keys (org_id, created_at DESC, id DESC);

CREATE TABLE projects (
  id           text COLLATE "C" PRIMARY KEY,
  org_id       text COLLATE "C" NOT NULL,
  name         text NOT NULL,
  description  text NOT NULL,
  is_default   boolean NOT NULL,
  created_at   timestamptz NOT NULL,
  extra        json NOT NULL DEFAULT '{}',
  CONSTRAINT projects_unique_name UNIQUE (org_id, name)
);
CREATE UNIQUE INDEX projects_one_default ON projects (org_id) WHERE is_default;
CREATE INDEX projects_by_org ON projects (org_id, created_at DESC, id DESC);

-- Latest version of each evaluator; every version (the latest included) is in evaluator_versions.
CREATE TABLE evaluators (
  id                        text COLLATE "C" PRIMARY KEY,
  org_id                    text COLLATE "C",            -- null for the shipped presets
  name                      text NOT NULL,
  intent                    text NOT NULL,
  rubric                    text NOT NULL,
  requires_contexts         boolean NOT NULL,
  requires_expected_output  boolean NOT NULL,
  demonstrations            json NOT NULL,
  model                     text,
  visibility                text NOT NULL,
  is_preset                 boolean NOT NULL,
  project_id                text COLLATE "C",
  version                   integer NOT NULL,
  created_at                timestamptz NOT NULL,
  updated_at                timestamptz NOT NULL,
  extra                     json NOT NULL DEFAULT '{}'
);
-- Names are unique per organization; the presets (org_id null) form one namespace of their own.
CREATE UNIQUE INDEX evaluators_unique_name ON evaluators ((coalesce(org_id, '')), name);
CREATE INDEX evaluators_by_org ON evaluators (org_id, created_at DESC, id DESC);
CREATE INDEX evaluators_public ON evaluators (created_at DESC, id DESC) WHERE visibility = 'public';

CREATE TABLE evaluator_versions (
  id       text COLLATE "C" NOT NULL,
  version  integer NOT NULL,
  record   json NOT NULL,
  PRIMARY KEY (id, version)
);

CREATE TABLE judges (
  id             text COLLATE "C" PRIMARY KEY,
  org_id         text COLLATE "C" NOT NULL,
  name           text NOT NULL,
  intent         text NOT NULL,
  stage          text,
  visibility     text NOT NULL,
  project_id     text COLLATE "C" NOT NULL,
  evaluators     json NOT NULL,
  evaluator_ids  text[] COLLATE "C" NOT NULL,        -- the ids in `evaluators`, for findJudgesUsingEvaluator
  version        integer NOT NULL,
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL,
  extra          json NOT NULL DEFAULT '{}',
  CONSTRAINT judges_unique_name UNIQUE (org_id, name)
);
CREATE INDEX judges_by_org ON judges (org_id, created_at DESC, id DESC);
CREATE INDEX judges_public ON judges (created_at DESC, id DESC) WHERE visibility = 'public';
CREATE INDEX judges_by_evaluator ON judges USING gin (evaluator_ids);

CREATE TABLE judge_versions (
  id       text COLLATE "C" NOT NULL,
  version  integer NOT NULL,
  record   json NOT NULL,
  PRIMARY KEY (id, version)
);

CREATE TABLE execution_logs (
  id                 text COLLATE "C" PRIMARY KEY,
  org_id             text COLLATE "C" NOT NULL,
  type               text NOT NULL,
  judge_id           text COLLATE "C",
  judge_name         text,
  judge_version      integer,
  evaluator_id       text COLLATE "C",
  evaluator_name     text,
  evaluator_version  integer,
  project_id         text COLLATE "C" NOT NULL,
  request            text,
  response           text NOT NULL,
  contexts           json,
  expected_output    text,
  user_id            text,
  tags               text[] NOT NULL,
  evaluator_results  json NOT NULL,
  -- evaluator_id plus every evaluator of evaluator_results: the evaluator_id filter matches either.
  evaluator_ids      text[] COLLATE "C" NOT NULL,
  score              double precision,
  cost_usd           double precision NOT NULL,
  latency_ms         double precision NOT NULL,
  created_at         timestamptz NOT NULL,
  extra              json NOT NULL DEFAULT '{}'
);
-- Every list is "newest first within one organization", so each filter has an index that either
-- yields rows in that order (btree ending in created_at, id) or narrows them to few (GIN, ranges).
CREATE INDEX execution_logs_by_org ON execution_logs (org_id, created_at DESC, id DESC);
CREATE INDEX execution_logs_by_judge ON execution_logs (judge_id, created_at DESC, id DESC) WHERE judge_id IS NOT NULL;
CREATE INDEX execution_logs_by_project ON execution_logs (project_id, created_at DESC, id DESC);
CREATE INDEX execution_logs_by_score ON execution_logs (org_id, score) WHERE score IS NOT NULL;
CREATE INDEX execution_logs_by_cost ON execution_logs (org_id, cost_usd);
CREATE INDEX execution_logs_by_tags ON execution_logs USING gin (tags);
CREATE INDEX execution_logs_by_evaluator ON execution_logs USING gin (evaluator_ids);
