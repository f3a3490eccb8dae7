// Judges and evaluators as files (SPEC section 16): the document's schema, its export and its
// parsing. A judge document carries its evaluators inline (so it can be imported into another
// organization or server), except presets, named as `{preset: <name>}`. Defaults are left out on
// export, so the file holds what was chosen; the same defaults fill them in on import.
import { parse as parseYaml, stringify as stringifyYaml, YAMLParseError } from 'yaml';
import { z } from 'zod';
import { fromZodError, TribunalError, validationError, type FieldError } from '../errors.ts';
import { Demonstration, EvaluatorScoring, JuryAggregation } from '../schemas.ts';
import type { EvaluatorRecord, JudgeRecord } from '../store/types.ts';
import { strictInput } from '../unknown-fields.ts';

const visibility = z.enum(['private', 'public']).optional().describe("private or public (a demo organization's are always public)");

export const EvaluatorBody = strictInput(
  z.object({
    name: z.string().min(1).max(200),
    intent: z.string().min(1),
    rubric: z.string().min(1),
    requires_contexts: z.boolean().optional(),
    requires_expected_output: z.boolean().optional(),
    requires_request: z.boolean().optional(),
    requires_turns: z.boolean().optional(),
    critical: z.boolean().optional(),
    demonstrations: z.array(Demonstration).optional(),
    model: z.string().nullable().optional(),
    models: z.array(z.string()).nullable().optional(),
    aggregation: JuryAggregation.nullable().optional(),
    scoring: EvaluatorScoring.optional(),
    visibility,
  }),
);
export type EvaluatorBody = z.infer<typeof EvaluatorBody>;

const PresetRef = strictInput(z.object({ preset: z.string().min(1).describe('exact name of a shipped preset evaluator') }));
const FORMAT = z.literal(1).describe('the document format; 1');

const EvaluatorDocument = strictInput(z.object({ kind: z.literal('evaluator'), format: FORMAT, evaluator: EvaluatorBody }));
const JudgeHead = strictInput(
  z.object({
    kind: z.literal('judge'),
    format: FORMAT,
    judge: z.object({
      name: z.string().min(1).max(200),
      intent: z.string().min(1),
      stage: z.string().nullable().optional(),
      visibility,
      evaluators: z.array(z.record(z.string(), z.unknown())).min(1),
    }),
  }),
);

export type EvaluatorEntry = { preset: string } | EvaluatorBody;
export type ParsedDocument =
  | { kind: 'evaluator'; evaluator: EvaluatorBody }
  | { kind: 'judge'; judge: { name: string; intent: string; stage?: string | null; visibility?: 'private' | 'public'; evaluators: EvaluatorEntry[] } };

/** The normalized content of an evaluator: what import compares and writes. */
export function normalizeEvaluator(e: EvaluatorBody | EvaluatorRecord) {
  return {
    intent: e.intent,
    rubric: e.rubric,
    requires_contexts: e.requires_contexts ?? false,
    requires_expected_output: e.requires_expected_output ?? false,
    requires_request: e.requires_request ?? false,
    requires_turns: e.requires_turns ?? false,
    critical: e.critical ?? false,
    demonstrations: e.demonstrations ?? [],
    model: e.model ?? null,
    models: e.models ?? null,
    aggregation: e.aggregation ?? null,
    scoring: e.scoring ?? 'direct',
  };
}

export function evaluatorBodyOf(e: EvaluatorRecord): EvaluatorBody {
  const n = normalizeEvaluator(e);
  const body: Record<string, unknown> = { name: e.name, intent: n.intent, rubric: n.rubric };
  for (const f of ['requires_contexts', 'requires_expected_output', 'requires_request', 'requires_turns', 'critical'] as const) if (n[f]) body[f] = true;
  if (n.demonstrations.length) body.demonstrations = n.demonstrations;
  if (n.model !== null) body.model = n.model;
  if (n.models !== null) body.models = n.models;
  if (n.aggregation !== null) body.aggregation = n.aggregation;
  if (n.scoring !== 'direct') body.scoring = n.scoring;
  body.visibility = e.visibility;
  return body as EvaluatorBody;
}

export function evaluatorDocument(e: EvaluatorRecord) {
  return { kind: 'evaluator' as const, format: 1 as const, evaluator: evaluatorBodyOf(e) };
}

export function judgeDocument(judge: JudgeRecord, evaluators: EvaluatorRecord[]) {
  return {
    kind: 'judge' as const,
    format: 1 as const,
    judge: {
      name: judge.name,
      intent: judge.intent,
      ...(judge.stage !== null ? { stage: judge.stage } : {}),
      visibility: judge.visibility,
      evaluators: evaluators.map((e) => (e.is_preset ? { preset: e.name } : evaluatorBodyOf(e))),
    },
  };
}

export const serialize = (doc: unknown, format: 'yaml' | 'json') => (format === 'json' ? `${JSON.stringify(doc, null, 2)}\n` : stringifyYaml(doc, { lineWidth: 0 }));

const prefixed = (errors: FieldError[] | undefined, prefix: string) => (errors ?? []).map((e) => ({ ...e, field: e.field === '(body)' ? prefix : `${prefix}.${e.field}` }));

/** Text (YAML or JSON) -> a checked document, or one 400 naming the path of every bad field. */
export function parseDocument(text: string, format: 'yaml' | 'json'): ParsedDocument {
  let raw: unknown;
  try {
    // No aliases: an anchor can make a cycle (&a [*a]) or an exponential expansion; a judge file needs neither.
    raw = format === 'json' ? JSON.parse(text) : parseYaml(text, { maxAliasCount: 0, uniqueKeys: true });
  } catch (err) {
    if (err instanceof YAMLParseError || err instanceof SyntaxError || (err instanceof Error && /alias/i.test(err.message))) {
      const why = /alias/i.test((err as Error).message)
        ? 'YAML aliases (*name) and anchors are not accepted in a judge file; write each value out'
        : (err as Error).message.split('\n')[0];
      throw validationError(`The document is not valid ${format === 'json' ? 'JSON' : 'YAML'}: ${why}.`, [{ field: '(body)', message: why }]);
    }
    throw err;
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    throw validationError('The document must be a mapping with kind (judge or evaluator), format: 1 and the judge or evaluator.', [
      { field: '(body)', message: 'expected a mapping' },
    ]);
  }
  const kind = (raw as Record<string, unknown>).kind;
  if (kind === 'evaluator') {
    const parsed = EvaluatorDocument.safeParse(raw);
    if (!parsed.success) throw documentError(fromZodError(parsed.error).errors);
    return { kind: 'evaluator', evaluator: parsed.data.evaluator };
  }
  const head = JudgeHead.safeParse(raw);
  const errors: FieldError[] = head.success ? [] : [...(fromZodError(head.error).errors ?? [])];
  const entries = (raw as { judge?: { evaluators?: unknown } }).judge?.evaluators;
  const evaluators: EvaluatorEntry[] = [];
  const seen = new Map<string, number>();
  if (Array.isArray(entries)) {
    entries.forEach((entry, i) => {
      if (!entry || typeof entry !== 'object' || Array.isArray(entry)) return;
      const schema = 'preset' in entry ? PresetRef : EvaluatorBody;
      const parsed = schema.safeParse(entry);
      if (!parsed.success) return errors.push(...prefixed(fromZodError(parsed.error).errors, `judge.evaluators.${i}`));
      const name = 'preset' in parsed.data ? `preset:${parsed.data.preset}` : parsed.data.name;
      if (seen.has(name)) errors.push({ field: `judge.evaluators.${i}`, message: `names the same evaluator as judge.evaluators.${seen.get(name)} (${name})` });
      seen.set(name, i);
      evaluators.push(parsed.data as EvaluatorEntry);
    });
  }
  if (errors.length || !head.success) throw documentError(errors);
  return { kind: 'judge', judge: { ...head.data.judge, evaluators } };
}

function documentError(errors: FieldError[] | undefined): TribunalError {
  const list = errors ?? [];
  return validationError(`Invalid judge file: ${list.map((e) => `${e.field}: ${e.message}`).join('; ')}`, list);
}
