// Declarative checks (SPEC section 15), compiled once per evaluator version: JSON Schemas by ajv,
// regular expressions checked for catastrophic backtracking, JSONPaths parsed. A compiled check
// answers null when it passes, or what it found when it fails.
import { isDeepStrictEqual } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { JSONPath } from 'jsonpath-plus';
import type { Check } from '../schemas/checks.ts';
import type { Turn } from '../schemas.ts';
import { backtrackingRisk } from './regex-safety.ts';

/** What checks read from a run. */
export interface CheckInput {
  request?: string | null;
  response: string;
  expected_output?: string | null;
  turns?: readonly Turn[] | null;
}

export interface CompiledCheck {
  /** How the justification names it: "regex /\d+/ on response". */
  label: string;
  /** null: passed; else what was found. */
  test(input: CheckInput): string | null;
}

/** A check that cannot be compiled: which field of which check, and why (a 400 at save). */
export class CheckCompileError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

// One validator for every schema: ajv caches compiled schemas by their content.
const ajv = new Ajv2020({ allErrors: false, strict: false, validateFormats: true });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);

const quote = (s: string, max = 80) => JSON.stringify(s.length > max ? `${s.slice(0, max)}…` : s);
const textOf = (input: CheckInput, field: 'response' | 'request' | 'expected_output') => input[field] ?? '';
// Parsing the same text for several JSON checks of one run happens once.
let lastText: string | null = null;
let lastParsed: { ok: true; value: unknown } | { ok: false; error: string } = { ok: false, error: '' };
function parseJson(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  if (text === lastText) return lastParsed;
  let parsed: typeof lastParsed;
  try {
    parsed = { ok: true, value: JSON.parse(text) };
  } catch (e) {
    parsed = { ok: false, error: `not valid JSON (${(e as Error).message})` };
  }
  lastText = text;
  lastParsed = parsed;
  return parsed;
}

function schemaValidator(schema: Record<string, unknown>, where: string) {
  try {
    return ajv.compile(schema);
  } catch (e) {
    throw new CheckCompileError(where, `is not a valid JSON Schema: ${(e as Error).message}`);
  }
}
const schemaErrors = (validate: { errors?: Array<{ instancePath: string; message?: string }> | null }) =>
  (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}`).join('; ');

function countCodePoints(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xdc00 && c <= 0xdfff && i > 0) {
      const p = s.charCodeAt(i - 1);
      if (p >= 0xd800 && p <= 0xdbff) n--;
    }
  }
  return n;
}
function countWords(s: string): number {
  let n = 0;
  let inWord = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const space = c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x2028 || c === 0x2029 || c === 0x3000;
    if (!space && !inWord) n++;
    inWord = !space;
  }
  return n;
}

function toolCalls(turns: readonly Turn[]) {
  return turns.flatMap((t) => (t.role === 'assistant' ? (t.tool_calls ?? []) : []));
}
function argumentsOf(args: string | Record<string, unknown>): unknown {
  if (typeof args !== 'string') return args;
  try {
    return JSON.parse(args);
  } catch {
    return args;
  }
}

export function compileCheck(check: Check, index: number): CompiledCheck {
  const where = `checks.${index}`;
  if (check.type === 'tool_call') {
    const mustCall = check.called !== false;
    const validate = check.arguments_schema ? schemaValidator(check.arguments_schema, `${where}.arguments_schema`) : null;
    return {
      label: `tool_call ${check.name}${mustCall ? '' : ' (must not be called)'}`,
      test(input) {
        const calls = toolCalls(input.turns ?? []);
        const named = calls.filter((c) => c.name === check.name);
        const seen = calls.length ? `tools called: ${[...new Set(calls.map((c) => c.name))].join(', ')}` : 'no tool was called';
        if (!mustCall) return named.length ? `it was called ${named.length} time(s)` : null;
        if (!named.length) return input.turns ? seen : 'no turns were given (tool calls are read from turns)';
        if (!validate) return null;
        let problem = '';
        for (const call of named) {
          if (validate(argumentsOf(call.arguments))) return null;
          problem = schemaErrors(validate);
        }
        return `called, but its arguments do not match arguments_schema: ${problem}`;
      },
    };
  }
  const field = check.field ?? 'response';
  const on = `on ${field}`;
  switch (check.type) {
    case 'json_valid':
      return {
        label: `json_valid ${on}`,
        test: (input) => {
          const r = parseJson(textOf(input, field));
          return r.ok ? null : r.error;
        },
      };
    case 'json_schema': {
      const validate = schemaValidator(check.schema, `${where}.schema`);
      return {
        label: `json_schema ${on}`,
        test(input) {
          const r = parseJson(textOf(input, field));
          if (!r.ok) return r.error;
          return validate(r.value) ? null : schemaErrors(validate);
        },
      };
    }
    case 'regex': {
      const risk = backtrackingRisk(check.pattern);
      if (risk) throw new CheckCompileError(`${where}.pattern`, `risks catastrophic backtracking: ${risk}; rewrite it without nested repetition`);
      let re: RegExp;
      try {
        re = new RegExp(check.pattern, check.flags ?? '');
      } catch (e) {
        throw new CheckCompileError(`${where}.pattern`, `is not a valid regular expression: ${(e as Error).message}`);
      }
      return {
        label: `regex /${check.pattern}/${check.flags ?? ''} ${on}`,
        test: (input) => (re.test(textOf(input, field)) ? null : `no match in ${quote(textOf(input, field))}`),
      };
    }
    case 'contains':
    case 'not_contains': {
      const sensitive = check.case_sensitive === true;
      const needle = sensitive ? check.value : check.value.toLowerCase();
      const wanted = check.type === 'contains';
      return {
        label: `${check.type} ${quote(check.value)} ${on}`,
        test(input) {
          const text = textOf(input, field);
          const at = (sensitive ? text : text.toLowerCase()).indexOf(needle);
          if (wanted) return at >= 0 ? null : `not found in ${quote(text)}`;
          return at < 0 ? null : `found at character ${at}: ${quote(text.slice(Math.max(0, at - 20), at + needle.length + 20))}`;
        },
      };
    }
    case 'equals': {
      const trim = check.trim !== false;
      const norm = (s: string) => (trim ? s.trim() : s);
      return {
        label: `equals ${check.value === undefined ? 'expected_output' : quote(check.value)} ${on}`,
        test(input) {
          const want = check.value ?? input.expected_output;
          if (want === undefined || want === null) return 'no expected_output was given to compare with';
          const got = textOf(input, field);
          return norm(got) === norm(want) ? null : `got ${quote(got)}`;
        },
      };
    }
    case 'json_path': {
      try {
        JSONPath.toPathArray(check.path);
      } catch (e) {
        throw new CheckCompileError(`${where}.path`, `is not a valid JSONPath: ${(e as Error).message}`);
      }
      const hasEquals = Object.prototype.hasOwnProperty.call(check, 'equals');
      return {
        label: `json_path ${check.path}${hasEquals ? ` equals ${JSON.stringify(check.equals)}` : ''} ${on}`,
        test(input) {
          const r = parseJson(textOf(input, field));
          if (!r.ok) return r.error;
          let found: unknown[];
          try {
            // eval "safe": filter expressions run in jsonpath-plus's own evaluator, never as host JavaScript.
            found = JSONPath({ path: check.path, json: r.value as object, wrap: true, eval: 'safe' }) as unknown[];
          } catch (e) {
            return `the path failed: ${(e as Error).message}`;
          }
          if (!found.length) return 'the path matched nothing';
          if (!hasEquals || isDeepStrictEqual(found[0], check.equals)) return null;
          return `found ${quote(JSON.stringify(found[0]) ?? 'undefined')}`;
        },
      };
    }
    case 'length': {
      if (check.min !== undefined && check.max !== undefined && check.min > check.max) throw new CheckCompileError(`${where}.min`, 'is greater than max');
      if (check.min === undefined && check.max === undefined) throw new CheckCompileError(`${where}`, 'a length check needs min, max or both');
      const words = check.unit === 'words';
      const unit = words ? 'words' : 'characters';
      return {
        label: `length ${check.min ?? 0}..${check.max ?? '∞'} ${unit} ${on}`,
        test(input) {
          const text = textOf(input, field);
          const n = words ? countWords(text) : countCodePoints(text);
          if (check.min !== undefined && n < check.min) return `${n} ${unit}, fewer than ${check.min}`;
          if (check.max !== undefined && n > check.max) return `${n} ${unit}, more than ${check.max}`;
          return null;
        },
      };
    }
  }
}
