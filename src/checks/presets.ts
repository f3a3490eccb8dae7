// The shipped check and code presets (data/check-presets.json): valid JSON, answer length, no PII
// patterns, a tool was called. Synced into the store at start-up like the model presets
// (domain/presets.ts): created when missing, a new version when their content changed.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { Check, CheckCombine } from '../schemas/checks.ts';
import type { EvaluatorRecord, Store } from '../store/types.ts';
import { settleKind, type KindContent } from './validate.ts';

const CheckPresetFile = z.array(
  z.object({
    id: z.string().regex(/^preset_[a-z0-9_]+$/),
    name: z.string().min(1),
    intent: z.string().min(1),
    kind: z.enum(['check', 'code']),
    checks: z.array(Check).optional(),
    combine: CheckCombine.optional(),
    code: z.string().optional(),
    critical: z.boolean().default(false),
    requires_turns: z.boolean().default(false),
  }),
);
export type CheckPreset = z.infer<typeof CheckPresetFile>[number];

const PATH = fileURLToPath(new URL('../../data/check-presets.json', import.meta.url));
const EPOCH = '2026-01-01T00:00:00.000Z';
/** Settling a check never starts the sandbox. */
const NO_SANDBOX = { code: { timeoutMs: 1, memoryBytes: 1, workers: 1 } };

let cached: CheckPreset[] | undefined;
export function loadCheckPresets(): CheckPreset[] {
  cached ??= CheckPresetFile.parse(JSON.parse(fs.readFileSync(PATH, 'utf8')));
  return cached;
}

/** The stored content of a preset (a check preset's rubric describes its checks, as for any check evaluator). */
async function contentOf(p: CheckPreset) {
  // Checks are compiled here (a broken preset fails start-up); code presets are run by test/checks-presets.test.ts.
  const settled: KindContent | null =
    p.kind === 'check' ? await settleKind(NO_SANDBOX, { kind: p.kind, checks: p.checks, combine: p.combine ?? 'all' } as KindContent, false) : null;
  return {
    name: p.name,
    intent: p.intent,
    rubric: settled?.rubric ?? 'Scored by code: score(input) in the sandbox (see `code`).',
    requires_contexts: false,
    requires_expected_output: settled?.requires_expected_output ?? false,
    requires_request: false,
    requires_turns: p.requires_turns || (settled?.requires_turns ?? false),
    critical: p.critical,
    demonstrations: [],
    kind: p.kind,
    checks: p.kind === 'check' ? (p.checks ?? []) : null,
    combine: p.kind === 'check' ? (p.combine ?? 'all') : null,
    code: p.kind === 'code' ? (p.code ?? '') : null,
  };
}

/**
 * Seeds the check and code presets after the model-graded ones: `firstIndex` is their place in the
 * preset list, so each is created a second before the one listed before it (lists are newest first).
 */
export async function syncCheckPresets(store: Store, firstIndex = 0): Promise<void> {
  for (const [i, preset] of loadCheckPresets().entries()) {
    const createdAt = new Date(Date.parse(EPOCH) - (firstIndex + i) * 1000).toISOString();
    const content = await contentOf(preset);
    const existing = await store.getEvaluator(preset.id);
    if (!existing) {
      const record: EvaluatorRecord = {
        id: preset.id,
        org_id: null,
        ...content,
        model: null,
        visibility: 'public',
        is_preset: true,
        project_id: null,
        version: 1,
        created_at: createdAt,
        updated_at: createdAt,
      };
      try {
        await store.createEvaluator(record);
      } catch {
        // Another instance seeded it at the same moment (PostgreSQL).
      }
      continue;
    }
    const stored = existing as unknown as Record<string, unknown>;
    // A flag absent from an older record reads as false; null stays null.
    const storedValue = (k: string, v: unknown) => (stored[k] === undefined && typeof v === 'boolean' ? false : stored[k]);
    const changed = Object.entries(content).some(([k, v]) => JSON.stringify(storedValue(k, v)) !== JSON.stringify(v));
    if (changed) await store.updateEvaluator({ ...existing, ...content, version: existing.version + 1, updated_at: new Date().toISOString() }, existing.version);
  }
}
