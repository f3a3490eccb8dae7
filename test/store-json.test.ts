// The Store contract on the JSON store, and what only the JSON store has: its files survive a
// restart, a torn last log line is dropped, and one process at a time owns the data directory.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { DataDirLockedError } from '../src/store/lock.ts';
import { jsonTempDirs, openJson } from './helpers/json-store.ts';
import { allItems, dataset, item } from './store-contract-datasets.ts';
import { apiKey, defineStoreContract, evaluator, judge, log, org, project } from './store-contract.ts';

const tempDir = jsonTempDirs('tribunal-store-json-');

defineStoreContract('JSON files', { makeStore: () => openJson(tempDir()) });

describe('JSON store on disk', () => {
  it('keeps everything across a close and reopen (a restart)', async () => {
    const dir = tempDir();
    const store = await openJson(dir);
    const o = org();
    const k = apiKey(o.id);
    const p = project(o.id, { is_default: true });
    const e = evaluator(o.id, { project_id: p.id });
    const j = judge(o.id, [e.id], { project_id: p.id });
    const l = log(o.id, { tags: ['x'] });
    await store.createOrganization(o);
    await store.createApiKey(k);
    await store.createProject(p);
    await store.createEvaluator(e);
    await store.updateEvaluator({ ...e, version: 2, rubric: 'stricter' }, 1);
    await store.createJudge(j);
    await store.appendExecutionLog(l);
    await store.close();

    const reopened = await openJson(dir);
    try {
      assert.deepEqual(await reopened.getOrganization(o.id), o);
      assert.deepEqual(await reopened.getApiKeyByPrefix(k.prefix), k);
      assert.deepEqual(await reopened.getDefaultProject(o.id), p);
      assert.equal((await reopened.getEvaluator(e.id))?.rubric, 'stricter');
      assert.deepEqual(await reopened.getEvaluatorVersion(e.id, 1), e);
      assert.deepEqual(await reopened.getJudge(j.id), j);
      assert.deepEqual(await reopened.getExecutionLog(l.id), l);
      assert.deepEqual((await reopened.listExecutionLogs({ org_id: o.id, tags: ['x'] }, { limit: 5 })).items, [l]);
    } finally {
      await reopened.close();
    }
  });

  it('drops a torn last line of logs.jsonl and keeps appending after it', async () => {
    const dir = tempDir();
    const store = await openJson(dir);
    const kept = [log('org_a'), log('org_a')];
    for (const l of kept) await store.appendExecutionLog(l);
    await store.close();
    const file = path.join(dir, 'logs.jsonl');
    const whole = fs.readFileSync(file, 'utf8');
    fs.appendFileSync(file, JSON.stringify(log('org_a')).slice(0, 40)); // a crash mid-append

    const reopened = await openJson(dir);
    try {
      const listed = (await reopened.listExecutionLogs({ org_id: 'org_a' }, { limit: 10 })).items;
      assert.deepEqual(new Set(listed.map((l) => l.id)), new Set(kept.map((l) => l.id)));
      assert.equal(fs.readFileSync(file, 'utf8'), whole, 'the torn tail is cut off the file');
      const next = log('org_a');
      await reopened.appendExecutionLog(next);
      assert.deepEqual(await reopened.getExecutionLog(next.id), next);
    } finally {
      await reopened.close();
    }
    const again = await openJson(dir);
    try {
      assert.equal((await again.listExecutionLogs({ org_id: 'org_a' }, { limit: 10 })).items.length, 3, 'the line written after the repair is whole');
    } finally {
      await again.close();
    }
  });

  it('refuses a second store on the same directory while another process holds it, and takes over once it died', async () => {
    const dir = tempDir();
    // Another process opens the directory and holds it (the lock treats our own pid as stale).
    const holder = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        `import { JsonStore } from './src/store/json-store.ts'; const s = new JsonStore({ dataDir: ${JSON.stringify(dir)} }); await s.init(); console.log('ready'); setInterval(() => {}, 1000);`,
      ],
      { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        holder.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
        holder.once('exit', (code) => reject(new Error(`holder exited with ${code}`)));
      });
      await assert.rejects(openJson(dir), (err: unknown) => {
        assert.ok(err instanceof DataDirLockedError);
        assert.equal(err.owner.pid, holder.pid);
        assert.match(err.message, /TRIBUNAL_STORE=postgres/);
        return true;
      });
    } finally {
      holder.kill('SIGKILL'); // dies without releasing: a stale lock stays behind
      await new Promise((r) => (holder.exitCode !== null || holder.signalCode !== null ? r(null) : holder.once('exit', r)));
    }
    const store = await openJson(dir);
    try {
      assert.equal(JSON.parse(fs.readFileSync(path.join(dir, 'tribunal.lock'), 'utf8')).pid, process.pid);
    } finally {
      await store.close();
    }
  });

  it('takes over a stale lock left by a process that died', async () => {
    const dir = tempDir();
    // A real process that exits: its pid is then (almost surely) free.
    const child = spawn(process.execPath, ['-e', '0']);
    const deadPid = child.pid!;
    await new Promise((r) => child.once('exit', r));
    fs.writeFileSync(path.join(dir, 'tribunal.lock'), JSON.stringify({ pid: deadPid, host: os.hostname(), role: 'server', since: new Date().toISOString() }));
    const store = await openJson(dir);
    try {
      const owner = JSON.parse(fs.readFileSync(path.join(dir, 'tribunal.lock'), 'utf8'));
      assert.equal(owner.pid, process.pid);
      await store.createOrganization(org());
    } finally {
      await store.close();
    }
  });
});

describe('JSON store datasets on disk', () => {
  it('keeps datasets and items (edits and deletes too) across a restart, outside db.json, and cuts a torn last item line', async () => {
    const dir = tempDir();
    const store = await openJson(dir);
    const d = dataset('org_a');
    await store.createDataset(d);
    const items = [item({ response: 'one' }), item({ response: 'two' }), item({ response: 'three' })];
    await store.addDatasetItems(d.id, items);
    await store.updateDatasetItem(d.id, { ...items[0], response: 'one, edited' });
    await store.deleteDatasetItem(d.id, items[1].id);
    await store.close();
    assert.ok(!fs.readFileSync(path.join(dir, 'db.json'), 'utf8').includes('three'), 'items are not in db.json');
    // A crash mid-append leaves half a line behind.
    fs.appendFileSync(path.join(dir, 'datasets', `${d.id}.jsonl`), '{"id":"itm_torn","resp');
    const reopened = await openJson(dir);
    try {
      assert.equal((await reopened.getDataset(d.id))?.item_count, 2);
      assert.deepEqual(
        (await allItems(reopened, d.id, 10)).map((i) => i.response),
        ['one, edited', 'three'],
      );
      const more = item({ response: 'four' });
      await reopened.addDatasetItems(d.id, [more]);
      assert.deepEqual(
        (await allItems(reopened, d.id, 1)).map((i) => i.response),
        ['one, edited', 'three', 'four'],
      );
    } finally {
      await reopened.close();
    }
  });
});

describe('JSON store batch rows on disk', () => {
  it('reads rows written before the scores prefix, cuts a torn last row, skips lines run together, and reads a large page in few reads', async () => {
    const { batch, row } = await import('./store-contract-batches.ts');
    const { rowScores } = await import('../src/store/types.ts');
    const dir = tempDir();
    const store = await openJson(dir);
    const b = batch('org_a', { status: 'running', total: 2000 });
    await store.createBatchExecution(b);
    const result = (score: number) => ({
      evaluator_id: 'evl_1',
      evaluator_name: 'Clarity',
      evaluator_version: 1,
      score,
      justification: 'x'.repeat(300),
      model: 'm',
      input_tokens: 1,
      output_tokens: 1,
      cost_usd: 0.001,
      latency_ms: 1,
    });
    // Positions 0 and 1 recorded by this server; 2 written in the older format (the whole row alone).
    await store.recordBatchRow(b.id, row(0, { evaluator_results: [result(0.5)] }));
    await store.recordBatchRow(b.id, row(1, { evaluator_results: [result(1)] }));
    await store.close();
    const file = path.join(dir, 'batches', `${b.id}.jsonl`);
    const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
    assert.equal(lines.length, 2);
    const { rowLine } = await import('../src/store/json-batches.ts');
    assert.equal(lines[0], rowLine(row(0, { evaluator_results: [result(0.5)] })));
    assert.deepEqual(JSON.parse(lines[0].split('\t')[1]), row(0, { evaluator_results: [result(0.5)] }), 'a line ends with the whole row after a tab');
    assert.ok(lines[0].split('\t')[0].length < 200, 'the scores before the tab are short');
    const old = row(2, { evaluator_results: [result(0.25)] });
    // A torn line whose next line was appended to it (two tabs), a torn scores prefix run into a
    // whole line, then a torn last line: none is a row.
    const whole3 = rowLine(row(3));
    fs.appendFileSync(file, `${JSON.stringify(old)}\n${whole3.slice(0, 40)}${whole3}\n[4,"itm_4",${whole3}\n${whole3.slice(0, whole3.length - 3)}`);
    const reopened = await openJson(dir);
    try {
      const counted = await reopened.getBatchExecution(b.id);
      assert.equal(counted?.done, 3, 'rows 0, 1 and the older-format row 2 are counted; nothing else');
      const rows = (await reopened.listBatchRows(b.id, { limit: 10 })).items;
      assert.deepEqual(
        rows.map((r) => r.position),
        [0, 1, 2],
      );
      assert.deepEqual(rows[2], old);
      assert.deepEqual((await reopened.listBatchRowScores(b.id, { limit: 10 })).items, rows.map(rowScores));
      assert.ok(fs.readFileSync(file, 'utf8').endsWith('\n'), 'the torn last line is cut');
      // Row 3 can be recorded now (its earlier lines were not rows), out of order with many more.
      const more = Array.from({ length: 1500 }, (_, i) => row(1999 - i, { evaluator_results: [result(i % 2)] }));
      for (const r of [row(3), ...more]) assert.equal(await reopened.recordBatchRow(b.id, r), true);
      const page = await reopened.listBatchRowScores(b.id, { limit: 1000, after: 499 });
      assert.deepEqual(
        page.items.map((r) => r.position),
        Array.from({ length: 1000 }, (_, i) => 500 + i),
      );
      assert.deepEqual(page.items[0], rowScores(more[1499]));
      assert.deepEqual((await reopened.listBatchRows(b.id, { limit: 2, after: 1997 })).items, [more[1], more[0]]);
    } finally {
      await reopened.close();
    }
  });
});
