// Unknown input fields are refused, never ignored: `{"response": "…", "contex": ["…"]}` would otherwise
// score without the contexts. Every input object (nested ones too: demonstrations) becomes a zod strict
// object whose own error names each unknown field and suggests the closest known name; MCP's JSON
// Schema then says `additionalProperties: false`, which is what the server enforces.
import { z } from 'zod';

/** Lowercase without separators, so judgeId, judge-id and JUDGE_ID all meet judge_id. */
const folded = (name: string) => name.toLowerCase().replace(/[_\-\s]/g, '');

/** Edit distance counting a swap of two neighbours as one edit (nmae -> name), as typos go. */
function editDistance(a: string, b: string): number {
  let before: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j], before[j - 2] + 1);
    }
    before = prev;
    prev = row;
  }
  return prev[b.length];
}

/** The known name `unknown` was most likely meant to be, or undefined when none is close. */
export function closestName(unknown: string, known: readonly string[]): string | undefined {
  const target = folded(unknown);
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const candidate = folded(name);
    // A plural/singular slip or a cut-off name (contex, evaluator_id for evaluator_ids) counts as close.
    const distance = candidate === target ? 0 : candidate.startsWith(target) || target.startsWith(candidate) ? 1 : editDistance(target, candidate);
    if (!best || distance < best.distance) best = { name, distance };
  }
  const allowed = Math.max(1, Math.floor(target.length / 3));
  return best && best.distance <= allowed ? best.name : undefined;
}

/** One field's message: "unknown field contex; did you mean contexts?" (or the known names when none is close). */
export function unknownFieldMessage(key: string, known: readonly string[]): string {
  const hint = closestName(key, known);
  return hint ? `unknown field ${key}; did you mean ${hint}?` : `unknown field ${key}; known fields: ${known.join(', ')}`;
}

interface UnknownKeysIssue {
  code: string;
  keys?: string[];
  path?: PropertyKey[];
  /** Set by the strict objects made here: the names this object knows. */
  known_fields?: string[];
}

/**
 * The field errors of a zod `unrecognized_keys` issue, one per unknown field (`demonstrations.0.scor`),
 * or undefined for any other issue.
 */
export function unknownFieldErrors(issue: UnknownKeysIssue): Array<{ field: string; message: string }> | undefined {
  if (issue.code !== 'unrecognized_keys' || !issue.keys) return undefined;
  const known = issue.known_fields ?? [];
  return issue.keys.map((key) => ({
    field: [...(issue.path ?? []), key].map(String).join('.'),
    message: known.length ? unknownFieldMessage(key, known) : `unknown field ${key}`,
  }));
}

const strictCache = new WeakMap<z.ZodType, z.ZodType>();

/** Copies a schema with a changed definition, keeping its description and other metadata. */
function withDef(schema: z.ZodType, def: Record<string, unknown>): z.ZodType {
  const copy = schema.clone(def as never) as z.ZodType;
  const meta = z.globalRegistry.get(schema);
  if (meta) z.globalRegistry.add(copy, meta);
  return copy;
}

/**
 * The same schema with every plain object in it made strict (an object with its own catchall, such
 * as a record of answers, keeps it). Memoized: tools are made once, REST-only inputs on first use.
 */
export function strictInput<S extends z.ZodType>(schema: S): S {
  const cached = strictCache.get(schema);
  if (cached) return cached as S;
  const def = schema._zod.def as unknown as Record<string, unknown>;
  let result: z.ZodType = schema;
  if (schema instanceof z.ZodObject) {
    const shape = Object.fromEntries(Object.entries(schema.shape as Record<string, z.ZodType>).map(([k, v]) => [k, strictInput(v)]));
    const known = Object.keys(shape);
    const ownError = def.error as ((iss: unknown) => unknown) | undefined;
    result = withDef(schema, {
      ...def,
      shape,
      catchall: def.catchall ?? z.never(),
      error: (iss: UnknownKeysIssue) => {
        if (iss.code !== 'unrecognized_keys' || !iss.keys) return ownError?.(iss);
        // Carried on the issue so the problem's field list can name each field with its suggestion.
        iss.known_fields = known;
        return iss.keys.map((key) => unknownFieldMessage(key, known)).join('; ');
      },
    });
  } else if (schema instanceof z.ZodArray) {
    result = withDef(schema, { ...def, element: strictInput(def.element as z.ZodType) });
  } else if (schema instanceof z.ZodUnion) {
    result = withDef(schema, { ...def, options: (def.options as z.ZodType[]).map((o) => strictInput(o)) });
  } else if ('innerType' in def) {
    // optional, nullable, default, prefault, readonly, catch...
    result = withDef(schema, { ...def, innerType: strictInput(def.innerType as z.ZodType) });
  }
  strictCache.set(schema, result);
  return result as S;
}
