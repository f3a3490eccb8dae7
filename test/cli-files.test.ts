// `tribunal files upload|list|delete` and `--attach` on run commands, end to end: the real command in
// a child process against a real server whose judge model is the fake Anthropic server.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { EXIT } from '../src/cli/errors.ts';
import { pdf, png } from './helpers/attachments.ts';
import { startCliRig, type CliResult, type CliRig } from './helpers/cli.ts';
import { tempDir } from './helpers/server.ts';

const ok = (r: CliResult) => {
  assert.equal(r.code, 0, `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
};

describe('tribunal files and --attach', () => {
  let rig: CliRig;
  const dir = tempDir('tribunal-cli-files-');
  before(async () => {
    rig = await startCliRig();
  });
  after(async () => {
    await rig.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('upload two files, attach them to an evaluator run, list and delete', async () => {
    fs.writeFileSync(path.join(dir, 'chart.png'), png(5));
    fs.writeFileSync(path.join(dir, 'invoice.pdf'), pdf());
    const up = JSON.parse(ok(await rig.cli(['files', 'upload', '--json', path.join(dir, 'chart.png'), path.join(dir, 'invoice.pdf')])).stdout);
    assert.deepEqual(
      up.map((f: { content_type: string; name: string }) => [f.name, f.content_type]),
      [
        ['chart.png', 'image/png'],
        ['invoice.pdf', 'application/pdf'],
      ],
    );
    ok(await rig.cli(['evaluators', 'create', '--name', 'Reads files', '--intent', 'Checks the reply matches the files', '--rubric', 'HIGH: matches. LOW: does not.']));
    rig.fake.resetStats();
    ok(await rig.cli(['evaluators', 'run', 'Reads files', '--response', 'Total 10 EUR.', '--attach', up[0].id, '--attach', up[1].id]));
    const content = rig.fake.requests[0].body.messages[0].content;
    assert.deepEqual(
      content.slice(0, 2).map((b: { type: string; source: { media_type: string } }) => [b.type, b.source.media_type]),
      [
        ['image', 'image/png'],
        ['document', 'application/pdf'],
      ],
    );
    const listed = ok(await rig.cli(['files', 'list'])).stdout;
    assert.match(listed, new RegExp(up[0].id));
    assert.match(listed, /invoice\.pdf/);
    ok(await rig.cli(['files', 'delete', up[0].id]));
    const gone = await rig.cli(['evaluators', 'run', 'Reads files', '--response', 'x y z', '--attach', up[0].id]);
    assert.equal(gone.code, EXIT.notFound);
    assert.match(gone.stderr, new RegExp(up[0].id));
  });

  test('a text file is refused by the server, naming what it is', async () => {
    fs.writeFileSync(path.join(dir, 'fake.png'), 'not a picture\n');
    const res = await rig.cli(['files', 'upload', path.join(dir, 'fake.png')]);
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, /is text, not a PDF, PNG, JPEG or WebP file/);
  });
});
