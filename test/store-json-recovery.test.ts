// Issue 11 items 2, 3 and 10 (JSON store): damaged data files never cost data. A bad line in the
// middle of logs.jsonl is skipped and kept aside, never truncated with everything after it; an
// unusable db.json stops the start with one line and is left untouched; stale temp files go.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { jsonTempDirs, openJson } from './helpers/json-store.ts';
import { cleanEnv } from './helpers/server.ts';
import { log, org } from './store-contract.ts';
import { setProcessLogger } from '../src/log.ts';

const tempDir = jsonTempDirs('tribunal-json-recovery-');

/** A data directory with an empty database, as a first start leaves it. */
async function initialized(): Promise<string> {
  const dir = tempDir();
  await (await openJson(dir)).close();
  return dir;
}

/** Runs `fn` with the process log's warnings captured. */
async function capturingWarnings<T>(fn: () => Promise<T>): Promise<{ result: T; warnings: string[] }> {
  const warnings: string[] = [];
  const keep = (_fields: object, message: string) => void warnings.push(message);
  setProcessLogger({ info: () => {}, warn: keep, error: keep });
  try {
    return { result: await fn(), warnings };
  } finally {
    setProcessLogger(null);
  }
}

describe('logs.jsonl with bad lines', () => {
  it('skips a bad line in the middle, warns with file and line, keeps it aside, and loses no later log', async () => {
    const dir = await initialized();
    const file = path.join(dir, 'logs.jsonl');
    const before = [log('org_a'), log('org_a'), log('org_a')];
    const later = [log('org_a'), log('org_a'), log('org_a')];
    const lines = [...before.map((l) => JSON.stringify(l)), 'null', '{"garbage', '{"id":"no-other-fields"}', ...later.map((l) => JSON.stringify(l))];
    const original = `${lines.join('\n')}\n`;
    fs.writeFileSync(file, original);

    const { result: store, warnings } = await capturingWarnings(() => openJson(dir));
    try {
      const listed = (await store.listExecutionLogs({ org_id: 'org_a' }, { limit: 50 })).items;
      assert.deepEqual(new Set(listed.map((l) => l.id)), new Set([...before, ...later].map((l) => l.id)));
      assert.equal(fs.readFileSync(file, 'utf8'), original, 'nothing was cut off or rewritten');
      assert.equal(warnings.length, 3, warnings.join('\n'));
      for (const [i, lineNo] of [4, 5, 6].entries()) assert.ok(warnings[i].startsWith(`${file}:${lineNo}: `), warnings[i]);
      const aside = fs
        .readFileSync(`${file}.rejected`, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      assert.deepEqual(
        aside.map((a) => [a.line, a.text]),
        [
          [4, 'null'],
          [5, '{"garbage'],
          [6, '{"id":"no-other-fields"}'],
        ],
      );
      const next = log('org_a');
      await store.appendExecutionLog(next);
    } finally {
      await store.close();
    }

    // A restart loads the same, plus the new log, and does not copy the bad lines aside twice.
    const { result: again } = await capturingWarnings(() => openJson(dir));
    try {
      assert.equal((await again.listExecutionLogs({ org_id: 'org_a' }, { limit: 50 })).items.length, 7);
      assert.equal(fs.readFileSync(`${file}.rejected`, 'utf8').trim().split('\n').length, 3);
    } finally {
      await again.close();
    }
  });

  it('keeps a last line that arrived whole without its newline, and terminates it', async () => {
    const dir = await initialized();
    const file = path.join(dir, 'logs.jsonl');
    const logs = [log('org_a'), log('org_a')];
    fs.writeFileSync(file, `${JSON.stringify(logs[0])}\n${JSON.stringify(logs[1])}`);
    const store = await openJson(dir);
    try {
      assert.equal((await store.listExecutionLogs({ org_id: 'org_a' }, { limit: 5 })).items.length, 2);
      await store.appendExecutionLog(log('org_a'));
    } finally {
      await store.close();
    }
    const reopened = await openJson(dir);
    try {
      assert.equal((await reopened.listExecutionLogs({ org_id: 'org_a' }, { limit: 5 })).items.length, 3);
    } finally {
      await reopened.close();
    }
  });

  it('keeps a torn last line aside before cutting it off', async () => {
    const dir = await initialized();
    const file = path.join(dir, 'logs.jsonl');
    const whole = `${JSON.stringify(log('org_a'))}\n`;
    const torn = JSON.stringify(log('org_a', { tags: ['ünïcode'] })).slice(0, 60);
    fs.writeFileSync(file, whole + torn);
    const { result: store, warnings } = await capturingWarnings(() => openJson(dir));
    await store.close();
    assert.equal(fs.readFileSync(file, 'utf8'), whole);
    assert.match(warnings[0] ?? '', /logs\.jsonl:2: torn last line/);
    assert.equal(JSON.parse(fs.readFileSync(`${file}.rejected`, 'utf8')).text, torn);
  });
});

describe('db.json that is not a Tribunal database', () => {
  const cases: Array<[string, string]> = [
    ['null', 'null'],
    ['an array', '[]'],
    ['only a format', '{"format":1}'],
    ['api_keys null', JSON.stringify({ format: 1, organizations: {}, api_keys: null, projects: {}, evaluators: {}, evaluator_versions: {}, judges: {}, judge_versions: {} })],
    ['a wrong format', JSON.stringify({ format: 2 })],
    ['not JSON', '{"format":1,'],
  ];
  for (const [label, content] of cases) {
    it(`refuses to start on ${label} and leaves the file as it was`, async () => {
      const dir = tempDir();
      const file = path.join(dir, 'db.json');
      fs.writeFileSync(file, content);
      await assert.rejects(openJson(dir), (err: Error) => {
        assert.match(err.message, /db\.json is not (valid JSON|a Tribunal database)/);
        assert.match(err.message, /Tribunal did not start and changed nothing/);
        assert.doesNotMatch(err.message, /\n/);
        return true;
      });
      assert.equal(fs.readFileSync(file, 'utf8'), content);
      assert.equal(fs.existsSync(path.join(dir, 'tribunal.lock')), false, 'the lock is let go');
    });
  }

  it('refuses to start when db.json is missing beside a non-empty logs.jsonl', async () => {
    const dir = tempDir();
    const logs = `${JSON.stringify(log('org_a'))}\n`;
    fs.writeFileSync(path.join(dir, 'logs.jsonl'), logs);
    await assert.rejects(openJson(dir), /db\.json is missing but logs\.jsonl beside it holds/);
    assert.equal(fs.existsSync(path.join(dir, 'db.json')), false);
    assert.equal(fs.readFileSync(path.join(dir, 'logs.jsonl'), 'utf8'), logs);
  });

  it('the server prints one line and exits 1', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'db.json'), '{"format":1}');
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: cleanEnv({ TRIBUNAL_DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1' }),
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(run.status, 1, run.stderr);
    const printed = run.stderr
      .trim()
      .split('\n')
      .filter((l) => !/ExperimentalWarning|--trace-warnings/.test(l));
    assert.equal(printed.length, 1, run.stderr);
    assert.match(printed[0], /db\.json is not a Tribunal database: its "organizations" is missing, not an object/);
  });
});

describe('demo purge on disk', () => {
  it('removes the purged logs from logs.jsonl for good, keeping the others and later appends', async () => {
    const dir = tempDir();
    const store = await openJson(dir);
    const demo = org({ is_demo: true, created_at: '2020-01-01T00:00:00.000Z' });
    const kept = org();
    await store.createOrganization(demo);
    await store.createOrganization(kept);
    const gone = log(demo.id);
    const stays = log(kept.id);
    await store.appendExecutionLog(gone);
    await store.appendExecutionLog(stays);
    await store.purgeOrganization(demo.id);
    const after = log(kept.id);
    await store.appendExecutionLog(after);
    await store.close();
    const text = fs.readFileSync(path.join(dir, 'logs.jsonl'), 'utf8');
    assert.ok(!text.includes(gone.id));
    const reopened = await openJson(dir);
    try {
      assert.equal(await reopened.getOrganization(demo.id), null);
      assert.equal(await reopened.getExecutionLog(gone.id), null);
      assert.deepEqual(new Set((await reopened.listExecutionLogs({ org_id: kept.id }, { limit: 5 })).items.map((l) => l.id)), new Set([stays.id, after.id]));
    } finally {
      await reopened.close();
    }
  });
});

describe('start-up housekeeping', () => {
  it('removes db.json temp files left by a crash, and keeps the database', async () => {
    const dir = tempDir();
    const store = await openJson(dir);
    const o = org();
    await store.createOrganization(o);
    await store.close();
    fs.writeFileSync(path.join(dir, 'db.json.99999.tmp'), '{"format":1,"half');
    fs.writeFileSync(path.join(dir, 'notes.tmp'), 'not ours');
    const reopened = await openJson(dir);
    try {
      assert.equal(fs.existsSync(path.join(dir, 'db.json.99999.tmp')), false);
      assert.equal(fs.existsSync(path.join(dir, 'notes.tmp')), true);
      assert.deepEqual(await reopened.getOrganization(o.id), o);
    } finally {
      await reopened.close();
    }
  });
});
