// The human-labelled sets of data/labelled/ (docs/QUALITY.md): every line a dataset item whose
// expected_scores name a shipped preset that can run on the item's inputs, balanced as documented.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadPresets } from '../src/domain/presets.ts';

const DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'data', 'labelled');
const SETS = [
  { file: 'halueval-general-truthfulness.jsonl', preset: 'Truthfulness', items: 100 },
  { file: 'llmbar-natural-instruction-following.jsonl', preset: 'Instruction Following', items: 200 },
];

describe('human-labelled sets (data/labelled)', () => {
  const presets = new Map(loadPresets().map((p) => [p.name, p]));

  for (const set of SETS) {
    test(`${set.file}: ${set.items} items for ${set.preset}, half passing, inputs the preset needs`, () => {
      const lines = fs.readFileSync(path.join(DIR, set.file), 'utf8').split('\n').filter(Boolean);
      assert.equal(lines.length, set.items);
      const preset = presets.get(set.preset);
      assert.ok(preset, `${set.preset} is a shipped preset`);
      let passing = 0;
      for (const [i, line] of lines.entries()) {
        const item = JSON.parse(line) as Record<string, unknown>;
        assert.deepEqual(Object.keys(item).sort(), ['expected_scores', 'metadata', 'request', 'response', 'tags'], `line ${i + 1}`);
        assert.ok(typeof item.response === 'string' && item.response.trim(), `line ${i + 1}: a response`);
        if (preset.requires_request) assert.ok(typeof item.request === 'string' && item.request.trim(), `line ${i + 1}: ${set.preset} needs a request`);
        assert.ok(!preset.requires_contexts && !preset.requires_expected_output, 'the sets carry no contexts or reference answers');
        const expected = item.expected_scores as Record<string, number>;
        assert.deepEqual(Object.keys(expected), [set.preset], `line ${i + 1}`);
        assert.ok(expected[set.preset] === 0 || expected[set.preset] === 1, `line ${i + 1}: a person's verdict is 0 or 1`);
        passing += expected[set.preset];
      }
      assert.equal(passing, set.items / 2, 'balanced: the majority baseline is 0.5');
    });
  }

  test('the README names each set with its source and licence', () => {
    const readme = fs.readFileSync(path.join(DIR, 'README.md'), 'utf8');
    for (const set of SETS) assert.match(readme, new RegExp(set.file.replace(/\./g, '\\.')));
    assert.match(readme, /MIT License|MIT, Copyright \(c\) 2020 RUCAIBox/);
    assert.match(readme, /Copyright \(c\) 2023 Princeton Natural Language Processing/);
  });
});
