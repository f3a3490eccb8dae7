// The shipped check and code presets (data/check-presets.json): valid JSON, answer length, no PII
// patterns, a tool was called. domain/presets.ts seeds them with the model presets, through the same
// create-or-version step.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { Check, CheckCombine } from '../schemas/checks.ts';
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

/** The check and code presets as stored content, for domain/presets.ts to seed after the model-graded ones. */
export async function checkPresetContents(): Promise<Array<{ id: string; content: Record<string, unknown> }>> {
  return Promise.all(loadCheckPresets().map(async (preset) => ({ id: preset.id, content: await contentOf(preset) })));
}
