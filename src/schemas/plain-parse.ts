// A plain reading of an object schema's input, for the inputs every judged call is checked against
// (issue 33: zod's safeParse of run_judge's input was about 4% of a run's main-thread CPU, most of
// it its per-field work on the ~20 optional fields a call leaves out). It is derived from the zod
// schema itself, so there is no second copy of the rules to keep in step: a field whose schema is a
// plain string (with only length and pattern checks), a boolean or a list of plain strings is read
// here; any other field (turns, attachments) is given to its own zod schema, exactly as the object's
// parse would. Only a yes is answered here: for anything the schema might refuse (an unknown field,
// a wrong type, a failed check) it answers undefined and the caller runs the zod parse, which words
// the error. What it answers is what the zod parse would (same fields, same order, fresh arrays):
// test/plain-parse.test.ts holds the two side by side.
import { z } from 'zod';

/** A value that the field's schema might refuse (not a value any input holds). */
const REFUSED: unique symbol = Symbol('refused');
/** The field's value as zod would answer it, or REFUSED. */
type Read = (value: unknown) => unknown;
interface Field {
  key: string;
  read: Read;
}

/** A string check this reading knows: min_length, max_length, or a regex format. */
type StringTest = (s: string) => boolean;

const defOf = (schema: z.ZodType) => schema._zod.def as unknown as Record<string, unknown>;
const checksOf = (schema: z.ZodType) => (defOf(schema).checks as Array<{ _zod: { def: Record<string, unknown> } }> | undefined) ?? [];

/** The tests of a plain string schema, or undefined when it is not one (coercion, transforms, other checks). */
function stringTests(schema: z.ZodType): StringTest[] | undefined {
  const def = defOf(schema);
  if (def.type !== 'string' || def.coerce || schema.constructor !== z.ZodString) return undefined;
  const tests: StringTest[] = [];
  for (const check of checksOf(schema)) {
    const c = check._zod.def;
    if (c.check === 'min_length' && typeof c.minimum === 'number') {
      const min = c.minimum;
      tests.push((s) => s.length >= min);
    } else if (c.check === 'max_length' && typeof c.maximum === 'number') {
      const max = c.maximum;
      tests.push((s) => s.length <= max);
    } else if (c.check === 'string_format' && c.format === 'regex' && c.pattern instanceof RegExp) {
      const pattern = c.pattern;
      // As zod tests it: the same RegExp, from its start.
      tests.push((s) => {
        pattern.lastIndex = 0;
        return pattern.test(s);
      });
    } else return undefined;
  }
  return tests;
}

/** How one field's value is read: by hand for the plain kinds, else by the field's own schema. */
function readerOf(field: z.ZodType): Read {
  const tests = stringTests(field);
  if (tests?.length === 0) return (v) => (typeof v === 'string' ? v : REFUSED);
  if (tests) {
    return (v) => {
      if (typeof v !== 'string') return REFUSED;
      for (const test of tests) if (!test(v)) return REFUSED;
      return v;
    };
  }
  const def = defOf(field);
  if (def.type === 'boolean' && !def.coerce && !checksOf(field).length && field.constructor === z.ZodBoolean) {
    return (v) => (typeof v === 'boolean' ? v : REFUSED);
  }
  if (def.type === 'array' && !checksOf(field).length && field.constructor === z.ZodArray) {
    const element = stringTests(def.element as z.ZodType);
    if (element && !element.length) {
      // zod answers a new array: so does this.
      return (v) => {
        if (!Array.isArray(v)) return REFUSED;
        const out = new Array<string>(v.length);
        for (let i = 0; i < v.length; i++) {
          const s: unknown = v[i];
          if (typeof s !== 'string') return REFUSED;
          out[i] = s;
        }
        return out;
      };
    }
  }
  return (v) => {
    const parsed = field.safeParse(v);
    return parsed.success ? parsed.data : REFUSED;
  };
}

/**
 * The reader of an object schema whose fields are all `.optional()` and which refuses unknown fields
 * (catchall never) or drops them (no catchall); null for any other schema.
 */
function compile(schema: z.ZodType): ((input: unknown) => Record<string, unknown> | undefined) | null {
  if (!(schema instanceof z.ZodObject)) return null;
  const def = defOf(schema);
  if (checksOf(schema).length) return null;
  const catchall = def.catchall as z.ZodType | undefined;
  if (catchall !== undefined && defOf(catchall).type !== 'never') return null;
  const strict = catchall !== undefined;
  const fields: Field[] = [];
  for (const [key, field] of Object.entries(schema.shape as Record<string, z.ZodType>)) {
    const fdef = defOf(field);
    // Only .optional(): absent stays absent, undefined stays undefined (no default, no exact optional).
    if (key === '__proto__' || fdef.type !== 'optional' || field.constructor !== z.ZodOptional || checksOf(field).length) return null;
    const inner = fdef.innerType as z.ZodType;
    if (inner._zod.optin !== undefined) return null;
    fields.push({ key, read: readerOf(inner) });
  }
  const known = new Set(fields.map((f) => f.key));
  return (input) => {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) return undefined;
    const given = input as Record<string, unknown>;
    // As zod's catchall: every enumerable key, own or inherited.
    if (strict) for (const key in given) if (!known.has(key)) return undefined;
    // The fields in the schema's order, each only when present (`in`, as zod tests presence).
    const out: Record<string, unknown> = {};
    for (const { key, read } of fields) {
      if (!(key in given)) continue;
      const v = given[key];
      if (v === undefined) {
        out[key] = undefined;
        continue;
      }
      const r = read(v);
      if (r === REFUSED) return undefined;
      out[key] = r;
    }
    return out;
  };
}

const compiled = new WeakMap<z.ZodType, ((input: unknown) => Record<string, unknown> | undefined) | null>();

/**
 * `schema.parse(input)`'s answer when that surely succeeds, read without zod's per-field work;
 * undefined when the schema might refuse the input, or is not an object of optional fields: then
 * run the zod parse. Compiled once per schema.
 */
export function plainParse(schema: z.ZodType, input: unknown): Record<string, unknown> | undefined {
  let read = compiled.get(schema);
  if (read === undefined) {
    read = compile(schema);
    compiled.set(schema, read);
  }
  return read ? read(input) : undefined;
}
