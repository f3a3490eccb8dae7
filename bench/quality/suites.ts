// bench:quality's suites: the shipped ones in data/suites/ (by name, or a group of names) and any
// JSONL file given with --suite-file. A file holds pairs (request, output_1, output_2, label) or
// best-of-4 items in RewardBench 2's format (bestof4.ts), told apart by its first line, so a
// shipped best-of-4 suite (rewardbench2-subset) runs by name like the pair suites.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isBestOf4Line, parseBestOf4, type BestOf4Item } from './bestof4.ts';
import { UsageError } from './provider.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const SUITES_DIR = path.join(ROOT, 'data/suites');
const GROUPS: Record<string, string[]> = {
  'llmbar-adversarial': ['llmbar-adversarial-neighbor', 'llmbar-adversarial-gptinst', 'llmbar-adversarial-gptout', 'llmbar-adversarial-manual'],
  llmbar: ['llmbar-natural', 'llmbar-adversarial-neighbor', 'llmbar-adversarial-gptinst', 'llmbar-adversarial-gptout', 'llmbar-adversarial-manual'],
};

export interface SuitePair {
  id: string;
  request: string;
  output_1: string;
  output_2: string;
  label: 1 | 2;
}

/** A suite: pairs or best-of-4 items (RewardBench 2's format), told apart by the first line. */
export type Loaded = { kind: 'pairs'; pairs: SuitePair[] } | { kind: 'bestof4'; items: BestOf4Item[]; skipped: number };

/** The path of a shipped suite file; an unknown name is a UsageError listing the known ones. */
function shippedFile(name: string): string {
  const p = path.join(SUITES_DIR, `${name}.jsonl`);
  if (!/^[a-z0-9-]+$/.test(name) || !fs.existsSync(p)) throw new UsageError(`unknown suite ${JSON.stringify(name)}; known: ${suiteNames().join(', ')}`);
  return p;
}

/** A shipped suite by name: a group of pair suites, or one file of data/suites/ (pairs or best-of-4). */
export function loadNamedSuite(name: string): Loaded {
  return GROUPS[name] ? { kind: 'pairs', pairs: loadSuite(name) } : loadSuiteFile(shippedFile(name));
}

/** The pairs of a shipped pair suite or group; a best-of-4 suite is a UsageError here. */
export function loadSuite(name: string): SuitePair[] {
  return (GROUPS[name] ?? [name]).flatMap((file) => {
    const loaded = loadSuiteFile(shippedFile(file));
    if (loaded.kind !== 'pairs') throw new UsageError(`suite ${JSON.stringify(file)} is best-of-4, not pairs`);
    return loaded.pairs;
  });
}

/** The shipped suites: the groups and every suite file in data/suites/. */
export function suiteNames(): string[] {
  return [
    ...Object.keys(GROUPS),
    ...fs
      .readdirSync(SUITES_DIR)
      .filter((f) => f.endsWith('.jsonl'))
      .map((f) => f.slice(0, -6)),
  ].sort();
}

export function loadSuiteFile(file: string): Loaded {
  if (!fs.existsSync(file)) throw new UsageError(`no such suite file ${JSON.stringify(file)}`);
  const text = fs.readFileSync(file, 'utf8');
  const first = text.split('\n').find((l) => l.trim());
  if (!first) throw new UsageError(`suite file ${file} is empty`);
  let row: Record<string, unknown>;
  try {
    row = JSON.parse(first);
  } catch {
    throw new UsageError(`${file} line 1: not JSON`);
  }
  if (isBestOf4Line(row)) return { kind: 'bestof4', ...parseBestOf4(text, file) };
  const pairs = text
    .split('\n')
    .filter((l) => l.trim())
    .map((l, i) => {
      const p = JSON.parse(l) as SuitePair;
      if (typeof p.request !== 'string' || typeof p.output_1 !== 'string' || typeof p.output_2 !== 'string' || (p.label !== 1 && p.label !== 2)) {
        throw new UsageError(`${file} line ${i + 1}: a pair needs request, output_1, output_2 (strings) and label 1 or 2; a best-of-4 item needs prompt, chosen and rejected`);
      }
      return p;
    });
  return { kind: 'pairs', pairs };
}
