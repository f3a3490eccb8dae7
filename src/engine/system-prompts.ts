// The system prompt of one evaluator version, built once and kept. Scoring's nonce is the version's
// (fence.ts), and everything else in the system prompt is the version's own text (prompt.ts), so
// every call of a version would join the same ~6 kB from some twenty parts again. A kept prompt is
// used only while the evaluator's prompt fields are still the ones it was built from, so two stores
// of one process that hold different evaluators under one id and version never share a prompt.
import { buildSystemPrompt, buildUserPrompt, promptHasConversation, type BuiltPrompt, type PromptEvaluator, type PromptItem } from './prompt.ts';

const KEPT_PROMPTS = 4096;

interface KeptPrompt {
  from: PromptEvaluator;
  system: string;
}

const kept = new Map<string, KeptPrompt>();

/** Equal as JSON data (strings, numbers, booleans, null, arrays, plain objects): a few µs where util.isDeepStrictEqual took tens. */
function sameData(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) if (!sameData((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  return true;
}

/** Frozen all the way down (checked once per kept prompt): such a value can never change. */
const frozenThrough = (value: unknown): boolean => value === null || typeof value !== 'object' || (Object.isFrozen(value) && Object.values(value).every(frozenThrough));

const builtFrom = (a: PromptEvaluator, b: PromptEvaluator) =>
  a.name === b.name &&
  a.intent === b.intent &&
  a.rubric === b.rubric &&
  Boolean(a.requires_contexts) === Boolean(b.requires_contexts) &&
  Boolean(a.requires_expected_output) === Boolean(b.requires_expected_output) &&
  sameData(a.demonstrations, b.demonstrations);

function keptSystemPrompt(evaluator: PromptEvaluator, nonce: string, conversation: boolean): string {
  const key = conversation ? `${nonce}+conversation` : nonce;
  const found = kept.get(key);
  if (found && builtFrom(found.from, evaluator)) return found.system;
  const system = buildSystemPrompt(evaluator, nonce, conversation);
  if (!found && kept.size >= KEPT_PROMPTS) kept.delete(kept.keys().next().value!);
  const { name, intent, rubric, requires_contexts, requires_expected_output, demonstrations } = evaluator;
  // A frozen list (the JSON store's read-only snapshot, store/json-snapshots.ts) cannot change: kept
  // as it is, the next run of the same stored version finds it identical (sameData's first test)
  // instead of comparing every demonstration field by field. Anything else is copied, as it may change.
  const from = frozenThrough(demonstrations) ? demonstrations : structuredClone(demonstrations);
  kept.set(key, { from: { name, intent, rubric, requires_contexts, requires_expected_output, demonstrations: from }, system });
  return system;
}

/** buildPrompt with the evaluator version's nonce (versionNonce): the system prompt kept per version, the user turn built for the run. */
export function versionPrompt(evaluator: PromptEvaluator, input: PromptItem, nonce: string): BuiltPrompt {
  return { system: keptSystemPrompt(evaluator, nonce, promptHasConversation(evaluator, input)), prompt: buildUserPrompt(evaluator, input, nonce), nonce };
}
