// Rebuilds data/suites/*.jsonl from a checkout (or bare git directory) of princeton-nlp/LLMBar:
//   node --import tsx bench/quality/convert-llmbar.ts <LLMBar git dir> [commit]
// Nothing is rewritten: each pair keeps its instruction, both outputs and the human label as in
// the source; only the field names change (request, output_1, output_2, label) and an id is added.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const SUITE_SOURCES: Record<string, string> = {
  'llmbar-natural': 'Dataset/LLMBar/Natural/dataset.json',
  'llmbar-adversarial-neighbor': 'Dataset/LLMBar/Adversarial/Neighbor/dataset.json',
  'llmbar-adversarial-gptinst': 'Dataset/LLMBar/Adversarial/GPTInst/dataset.json',
  'llmbar-adversarial-gptout': 'Dataset/LLMBar/Adversarial/GPTOut/dataset.json',
  'llmbar-adversarial-manual': 'Dataset/LLMBar/Adversarial/Manual/dataset.json',
  'mtbench-human': 'Dataset/Processed/MT-Bench/dataset.json',
};

interface SourcePair {
  input: string;
  output_1: string;
  output_2: string;
  label: number;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [gitDir, commit = 'HEAD'] = process.argv.slice(2);
  if (!gitDir) throw new Error('usage: convert-llmbar.ts <LLMBar git dir> [commit]');
  const out = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../data/suites');
  fs.mkdirSync(out, { recursive: true });
  for (const [name, source] of Object.entries(SUITE_SOURCES)) {
    const text = execFileSync('git', ['--git-dir', gitDir, 'show', `${commit}:${source}`], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    const pairs = JSON.parse(text) as SourcePair[];
    const lines = pairs.map((p, i) => {
      if (p.label !== 1 && p.label !== 2) throw new Error(`${source} pair ${i}: label ${p.label} is neither 1 nor 2`);
      return JSON.stringify({ id: `${name}-${String(i + 1).padStart(3, '0')}`, request: p.input, output_1: p.output_1, output_2: p.output_2, label: p.label });
    });
    fs.writeFileSync(path.join(out, `${name}.jsonl`), `${lines.join('\n')}\n`);
    console.log(`${name}: ${pairs.length} pairs from ${source}`);
  }
}
