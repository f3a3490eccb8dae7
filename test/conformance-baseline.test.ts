// issue 26 item 13: the conformance expected-failures list is true for server-sse-multiple-streams.
// Stateless Tribunal gives no session id, the scenario records one WARNING and no check, and the
// suite counts a WARNING as a failure: with the list the run passes; without the entry it fails.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { tempDir } from './helpers/server.ts';

const ROOT = path.resolve(import.meta.dirname, '..');

function conformance(args: string[]): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/conformance.ts', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out })));
}

test('server-sse-multiple-streams: listed, the run passes; unlisted, it is an unexpected failure', async () => {
  const listed = await conformance(['--scenario', 'server-sse-multiple-streams']);
  assert.equal(listed.code, 0, listed.out);
  assert.match(listed.out, /Server provides session ID for multiple streams test/);
  assert.match(listed.out, /Baseline check passed/);

  const empty = path.join(tempDir('conformance-'), 'none.yml');
  fs.writeFileSync(empty, 'server: []\n');
  const unlisted = await conformance(['--scenario', 'server-sse-multiple-streams', '--expected-failures', empty]);
  assert.match(unlisted.out, /Unexpected failures \(not in baseline\):[\s\S]*server-sse-multiple-streams/, unlisted.out);
});
