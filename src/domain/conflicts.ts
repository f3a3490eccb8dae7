// What a caller is told when a store refuses a write as a conflict. The stores give the reason as
// data (StoreConflictError.reason); the words are written here, once, so both stores say the same.
import { TribunalError } from '../errors.ts';
import { describeConflict, StoreConflictError, type ConflictReason } from '../store/types.ts';

function sentence(reason: ConflictReason): string {
  const text = describeConflict(reason);
  return text[0].toUpperCase() + text.slice(1);
}

/** A StoreConflictError becomes a 409 that says what happened and what to do; anything else passes through. */
export function conflictToError(err: unknown, advice: string): unknown {
  if (!(err instanceof StoreConflictError)) return err;
  return new TribunalError('conflict', 409, `${sentence(err.reason)}; ${advice}`);
}
