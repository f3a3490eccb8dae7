-- cost_usd is null when the run's model has no price (unknown cost, never a silent 0). A null cost
-- matches no min_cost/max_cost filter (SQL comparisons with NULL are not true).
ALTER TABLE execution_logs ALTER COLUMN cost_usd DROP NOT NULL;
