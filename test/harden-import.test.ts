// Issue 24, items 6 and 7 (h-harden): a malformed CSV row is a skipped line (not a 500 after earlier
// rows were stored), and an import of many invalid lines yields to the event loop between slices of
// lines, with a capped report. TRIBUNAL_TEST_STORE=postgres runs it on PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from './helpers/server.ts';

describe('dataset import hardening', () => {
  let server: TestServer;
  let key: string;
  const newDataset = async (name: string) => {
    const res = await server.request('POST', '/v1/datasets/', { key, body: { name } });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.id as string;
  };
  const send = async (id: string, body: string | ReadableStream<Uint8Array>, type: string) => {
    const res = await fetch(`${server.url}/v1/datasets/${id}/items/import/`, {
      method: 'POST',
      headers: { authorization: `Api-Key ${key}`, 'content-type': type },
      body,
      duplex: 'half',
    } as RequestInit);
    return { status: res.status, body: (await res.json()) as any };
  };
  const countItems = async (id: string) => {
    let n = 0;
    let cursor: string | undefined;
    do {
      const page = await server.request('GET', `/v1/datasets/${id}/items/?limit=200${cursor ? `&cursor=${cursor}` : ''}`, { key });
      assert.equal(page.status, 200, JSON.stringify(page.body));
      n += page.body.results.length;
      cursor = page.body.next_cursor ?? undefined;
    } while (cursor);
    return n;
  };

  before(async () => {
    server = await startTestServer({ TRIBUNAL_RATE_LIMIT: '100000' });
    key = (await server.demoUser()).api_key;
  });
  after(() => server.close());

  test('a malformed CSV row is a skipped line; the good rows before and after it are stored', async () => {
    const id = await newDataset('csv-bad-row');
    const rows = ['response,request'];
    for (let i = 0; i < 250; i++) rows.push(`answer ${i},question ${i}`);
    rows.push('one,two,three,four'); // more cells than the header has columns
    for (let i = 250; i < 260; i++) rows.push(`answer ${i},question ${i}`);
    const res = await send(id, `${rows.join('\n')}\n`, 'text/csv');
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.created, 260);
    assert.equal(res.body.skipped_count, 1);
    assert.equal(res.body.skipped[0].line, 252);
    assert.equal(await countItems(id), 260, 'what the answer says was created is what is stored');
  });

  test('1 MiB of invalid JSONL lines: the event loop keeps turning, every line is counted, the report is capped', async () => {
    const id = await newDataset('jsonl-bad');
    const line = '{bad\n';
    const lines = Math.floor((1024 * 1024) / line.length);
    const chunk = new TextEncoder().encode(line.repeat(Math.floor(65536 / line.length)));
    const perChunk = Math.floor(65536 / line.length);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= lines) return controller.close();
        const n = Math.min(perChunk, lines - sent);
        sent += n;
        controller.enqueue(n === perChunk ? chunk : chunk.subarray(0, n * line.length));
      },
    });
    // Turns of the event loop while the import runs: without yielding, one per 64 KiB chunk at best.
    let turns = 0;
    let ticking = true;
    const tick = () => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const health: number[] = [];
    let polling = true;
    const poll = (async () => {
      while (polling) {
        const t = performance.now();
        await fetch(`${server.url}/healthz`).then((r) => r.arrayBuffer());
        health.push(performance.now() - t);
      }
    })();
    const res = await send(id, body, 'application/x-ndjson');
    ticking = false;
    polling = false;
    await poll;
    assert.equal(res.status, 201, JSON.stringify(res.body).slice(0, 500));
    assert.equal(res.body.created, 0);
    assert.equal(res.body.skipped_count, lines);
    assert.equal(res.body.skipped.length, 1000, 'the listed skipped lines are capped');
    assert.ok(res.body.skipped.every((s: { error: string }) => s.error.length <= 200));
    assert.ok(turns > lines / 256 / 2, `the event loop turned ${turns} times for ${lines} lines`);
    health.sort((a, b) => a - b);
    // A figure for the report, not an assertion (the machine is shared): /healthz latency during the import.
    console.log(
      `# /healthz during a ${lines}-line invalid import: n=${health.length} p50=${health[Math.floor(health.length / 2)]?.toFixed(1)}ms p95=${health[Math.floor(health.length * 0.95)]?.toFixed(1)}ms; event-loop turns ${turns}`,
    );
  });
});
