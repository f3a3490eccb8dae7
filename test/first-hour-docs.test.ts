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
