// issue 26: what the README promises, checked against the code it describes.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

const ROOT = path.resolve(import.meta.dirname, '..');
const read = (p: string) => fs.readFileSync(path.join(ROOT, p), 'utf8');

test("every error code the server can answer is in the README's list", () => {
  const union = /export type ErrorCode =([^;]+);/.exec(read('src/errors.ts'))![1];
  const codes = [...union.matchAll(/'([a-z_]+)'/g)].map((m) => m[1]);
  assert.ok(codes.length >= 12, union);
  const readme = read('README.md');
  const list = /Error codes: ([\s\S]+?)\n\n/.exec(readme)![1];
  const missing = codes.filter((c) => !list.includes(`\`${c}\``));
  assert.deepEqual(missing, [], `not in the README's error codes: ${missing.join(', ')}`);
});

test('every command line of the README is inside a closed code block, so it renders as a copy-paste example', () => {
  const loose: string[] = [];
  let open: number | null = null;
  read('README.md')
    .split('\n')
    .forEach((line, i) => {
      const fence = /^\s*(`{3,})/.exec(line);
      if (fence) {
        // A fence of four backticks is closed only by four: it once swallowed five sections whole.
        assert.equal(fence[1].length, 3, `line ${i + 1}: fences are three backticks`);
        open = open === null ? i + 1 : null;
      } else if (open === null && /^(curl|tribunal|npx|npm|export|cp|mkdir) /.test(line)) loose.push(`${i + 1}: ${line.slice(0, 60)}`);
    });
  assert.equal(open, null, `the code block opened on line ${open} is never closed`);
  assert.deepEqual(loose, [], 'command lines outside a code block');
});
