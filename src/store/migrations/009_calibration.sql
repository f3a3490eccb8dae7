-- Tribunal schema, version 9: human labels and calibration runs (SPEC section 8).
--
-- Both are read whole, so each is one JSON document; the columns are what lists filter and sort on.
-- One annotation per (execution log, evaluator): a person corrects a result by editing it.
CREATE TABLE annotations (
  id                text COLLATE "C" PRIMARY KEY,
  org_id            text COLLATE "C" NOT NULL,
  execution_log_id  text COLLATE "C" NOT NULL,
  evaluator_id      text COLLATE "C" NOT NULL,
  judge_id          text COLLATE "C",
  created_at        timestamptz NOT NULL,
  record            json NOT NULL,
  CONSTRAINT annotations_log_evaluator_key UNIQUE (execution_log_id, evaluator_id)
);
CREATE INDEX annotations_by_org ON annotations (org_id, created_at DESC, id DESC);
CREATE INDEX annotations_by_judge ON annotations (org_id, judge_id, created_at DESC, id DESC);
CREATE INDEX annotations_by_evaluator ON annotations (org_id, evaluator_id, created_at DESC, id DESC);

-- A calibration run: a batch run over a labelled dataset plus the agreement metrics, stored once
-- the batch completes. evaluator_ids lists every evaluator measured (for an evaluator's summary).
CREATE TABLE calibration_runs (
  id             text COLLATE "C" PRIMARY KEY,
  org_id         text COLLATE "C" NOT NULL,
  judge_id       text COLLATE "C",
  evaluator_id   text COLLATE "C",
  evaluator_ids  text[] COLLATE "C" NOT NULL,
  dataset_id     text COLLATE "C" NOT NULL,
  status         text NOT NULL,
  created_at     timestamptz NOT NULL,
  record         json NOT NULL
);
CREATE INDEX calibration_runs_by_org ON calibration_runs (org_id, created_at DESC, id DESC);
CREATE INDEX calibration_runs_by_judge ON calibration_runs (judge_id, created_at DESC, id DESC);
CREATE INDEX calibration_runs_by_evaluator ON calibration_runs USING gin (evaluator_ids);
