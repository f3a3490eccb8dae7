-- Tribunal schema, version 12: the execution log `type` filter (SPEC section 13: the judge proxy's
-- logs have type "proxy" and are listed apart). One index serves the filter newest first.
CREATE INDEX execution_logs_by_type ON execution_logs (org_id, type, created_at DESC, id DESC);
