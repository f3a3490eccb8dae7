// How a store is assembled from its resource parts (store/parts/): a class extends
// `composed<Parts>()` and hands its parts to super, which copies them onto the instance. The class's
// type is exactly the parts it was given, so `implements Store` is checked by tsc against what was
// really assembled: a part left out is a type error, not a missing method at run time.

/** A base class whose instances are the given parts, merged (later parts may not reuse a name). */
export function composed<Parts extends object>(): new (parts: Parts) => Parts {
  return class {
    constructor(parts: Parts) {
      Object.assign(this, parts);
    }
  } as new (
    parts: Parts,
  ) => Parts;
}
