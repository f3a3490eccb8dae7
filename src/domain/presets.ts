// The shipped presets (data/presets.json) are copied into the store at start-up so that lists,
// name lookups and judges treat them like any evaluator. A preset whose text changed in a new
// release gets a new version; old versions stay readable for the logs that used them.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { Demonstration, Evaluator } from '../schemas.ts';
import type { EvaluatorRecord, Store } from '../store/types.ts';
import { checkPresetContents } from '../checks/presets.ts';

const PresetFile = z.array(
  z.object({
    id: z.string().regex(/^preset_[a-z0-9_]+$/),
    name: z.string().min(1),
    intent: z.string().min(1),
    rubric: z.string().min(1),
    requires_contexts: z.boolean(),
    requires_expected_output: z.boolean(),
    // Declared inputs and the safety gate (SPEC section 12); both default to false.
    requires_request: z.boolean().default(false),
    requires_turns: z.boolean().default(false),
    critical: z.boolean().default(false),
    demonstrations: z.array(Demonstration),
    tags: z.array(z.string()).optional(),
  }),
);
export type Preset = z.infer<typeof PresetFile>[number];

const PRESETS_PATH = fileURLToPath(new URL('../../data/presets.json', import.meta.url));
const PRESET_EPOCH = '2026-01-01T00:00:00.000Z';

let cached: Preset[] | undefined;
export function loadPresets(): Preset[] {
  cached ??= PresetFile.parse(JSON.parse(fs.readFileSync(PRESETS_PATH, 'utf8')));
  return cached;
}

// requires_request and critical reach the store only once the evaluator schema carries them (the
// engine adds them): a stored field the schema does not know would fail every output validation.
const SCHEMA_FIELDS = new Set(Object.keys(Evaluator.shape));
const OPTIONAL_FLAGS = ['requires_request', 'requires_turns', 'critical'] as const;

/**
 * A preset's creation time: a second before the previous one in data/presets.json, so that lists
 * (newest first) give the file's order, the most used first (issue 26; all at one instant they
 * were ordered by id, Z to A). Stores seeded before keep their times until a preset's text changes.
 */
const presetCreatedAt = (index: number) => new Date(Date.parse(PRESET_EPOCH) - index * 1000).toISOString();

/**
 * Seeds every shipped preset: the model-graded ones of data/presets.json, then the check and code
 * presets (checks/presets.ts), each created when missing and given a new version when its content
 * changed. The place in that list fixes the creation time, so lists give the shipped order.
 */
export async function syncPresets(store: Store): Promise<void> {
  const model = loadPresets().map((preset) => {
    const flags = Object.fromEntries(OPTIONAL_FLAGS.filter((k) => SCHEMA_FIELDS.has(k)).map((k) => [k, preset[k]]));
    const content = {
      name: preset.name,
      intent: preset.intent,
      rubric: preset.rubric,
      requires_contexts: preset.requires_contexts,
      requires_expected_output: preset.requires_expected_output,
      ...flags,
      demonstrations: preset.demonstrations,
    };
    return { id: preset.id, content };
  });
  const all = [...model, ...(await checkPresetContents())];
  for (const [index, { id, content }] of all.entries()) await syncPreset(store, id, content, presetCreatedAt(index));
}

async function syncPreset(store: Store, id: string, content: Record<string, unknown>, createdAt: string): Promise<void> {
  const existing = await store.getEvaluator(id);
  if (!existing) {
    const record = {
      id,
      org_id: null,
      ...content,
      model: null,
      visibility: 'public',
      is_preset: true,
      project_id: null,
      version: 1,
      created_at: createdAt,
      updated_at: createdAt,
    } as EvaluatorRecord;
    try {
      await store.createEvaluator(record);
    } catch {
      // Another instance seeded it at the same moment (PostgreSQL); nothing to do.
    }
    return;
  }
  // A flag a record stored before the flag existed lacks reads as its default, false; null stays null.
  const stored = existing as unknown as Record<string, unknown>;
  const storedValue = (k: string, v: unknown) => (stored[k] === undefined && typeof v === 'boolean' ? false : stored[k]);
  const changed = Object.entries(content).some(([k, v]) => JSON.stringify(storedValue(k, v)) !== JSON.stringify(v));
  if (changed)
    await store.updateEvaluator(
      { ...existing, ...content, version: existing.version + 1, created_at: createdAt, updated_at: new Date().toISOString() } as EvaluatorRecord,
      existing.version,
    );
}
