// JSON kept for the parts of a model request that are the same on every call of one evaluator
// version: the system prompt block (some 6 kB of text) and the tool with its schema. Serializing
// them again on every call was most of the request body's JSON.stringify, itself the largest self
// time of a judged call in issue 33's profile. A part is registered once (and frozen, so what is
// sent can never drift from what was kept); a body that holds it is then the same bytes that
// JSON.stringify of the whole would give, with the kept parts pasted in.

const kept = new WeakMap<object, string>();

function freezeDeep<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  for (const inner of Object.values(value)) freezeDeep(inner);
  return Object.freeze(value);
}

/** Freezes `part` (deeply) and keeps its JSON: a body serialized by `stringifyBody` that holds it does not serialize it again. */
export function keepJson<T extends object>(part: T): T {
  const frozen = freezeDeep(part);
  if (!kept.has(frozen)) kept.set(frozen, JSON.stringify(frozen));
  return frozen;
}

/** Exactly JSON.stringify(body) for a plain object, each top-level value that keepJson kept pasted in as it was serialized. */
export function stringifyBody(body: object): string {
  let out = '{';
  // Object.keys, not Object.entries: no [key, value] array per field.
  for (const key of Object.keys(body)) {
    const value = (body as Record<string, unknown>)[key];
    const json = (value !== null && typeof value === 'object' && kept.get(value)) || JSON.stringify(value);
    // JSON.stringify leaves out what has no JSON (undefined, functions, symbols).
    if (json === undefined) continue;
    out += `${out.length > 1 ? ',' : ''}${JSON.stringify(key)}:${json}`;
  }
  return `${out}}`;
}
