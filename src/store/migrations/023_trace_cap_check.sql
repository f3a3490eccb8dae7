-- The span cap checked inside the statement that stores a batch (src/store/postgres/traces.ts): the
-- batch and the organization's count are written by one statement in autocommit, and this raises
-- (SQLSTATE TRB01) when the new count passes the cap, so the statement is undone as a whole and the
-- store decides that batch again with the count row held first. One round trip per batch.
CREATE FUNCTION tribunal_trace_cap(held bigint, cap bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
BEGIN
  IF held > cap THEN
    RAISE EXCEPTION 'the organization''s span cap (%) would be passed (%)', cap, held USING ERRCODE = 'TRB01';
  END IF;
  RETURN held;
END
$$;
