// Attachments over real HTTP on both stores (SPEC section 16): uploads of the four kinds, the type
// read from the bytes, the size limit, the same bytes answering the same id, per-org visibility,
// list and delete, the quota, and the demo purge taking the files with their organization.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { purgeExpiredDemoOrganizations } from '../src/demo-purge.ts';
import { jpeg, pdf, png, upload, webp } from './helpers/attachments.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

let srv: TestServer;
let keyA: string;
let keyB: string;
let orgA: string;

async function realOrg(name: string) {
  const { createOrganization } = await import('../src/domain/orgs.ts');
  return createOrganization(srv.store, { name, isDemo: false });
}

before(async () => {
  srv = await startTestServer({ TRIBUNAL_DEMO_QUOTA_FILES: '2', TRIBUNAL_DEMO_QUOTA_FILE_BYTES: '100000' });
  const a = await realOrg(`files-a-${Date.now()}`);
  keyA = a.api_key;
  orgA = a.organization.id;
  keyB = (await realOrg(`files-b-${Date.now()}`)).api_key;
});
after(() => srv.close());

describe('POST /v1/files/', () => {
  for (const [kind, data, type] of [
    ['PNG', png(7), 'image/png'],
    ['JPEG', jpeg(), 'image/jpeg'],
    ['WebP', webp(), 'image/webp'],
    ['PDF', pdf(), 'application/pdf'],
  ] as const) {
    it(`stores a ${kind}, its type sniffed from the bytes`, async () => {
      // Declared as something else and named without an extension: only the bytes count.
      const res = await upload(srv.url, keyA, data, `upload-${kind}`, { type: 'text/plain' });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      const sha256 = createHash('sha256').update(data).digest('hex');
      assert.deepEqual(Object.keys(res.body).sort(), ['bytes', 'content_type', 'created_at', 'id', 'name', 'sha256']);
      assert.equal(res.body.content_type, type);
      assert.equal(res.body.bytes, data.length);
      assert.equal(res.body.sha256, sha256);
      assert.equal(res.body.id, `file_${sha256.slice(0, 32)}`);
      assert.equal(res.body.name, `upload-${kind}`);
    });
  }

  it('answers the same id for the same bytes (200, nothing stored twice), another id for other bytes', async () => {
    const first = await upload(srv.url, keyA, png(100), 'a.png');
    const again = await upload(srv.url, keyA, png(100), 'renamed.png');
    assert.equal(first.status, 201);
    assert.equal(again.status, 200);
    assert.deepEqual(again.body, first.body);
    const other = await upload(srv.url, keyA, png(101), 'a.png');
    assert.notEqual(other.body.id, first.body.id);
    // The same bytes in another organization: its own copy, under the same id.
    const inB = await upload(srv.url, keyB, png(100), 'b.png');
    assert.equal(inB.status, 201);
    assert.equal(inB.body.id, first.body.id);
    assert.equal(inB.body.name, 'b.png');
  });

  it('stores the same bytes once when eight uploads race', async () => {
    const data = pdf(`raced ${Date.now()}`);
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => upload(srv.url, keyA, data, `race-${i}.pdf`)));
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 200, 200, 200, 200, 200, 200, 201]);
    assert.equal(new Set(answers.map((a) => a.body.id)).size, 1);
    const list = await srv.request('GET', '/v1/files/?limit=200', { key: keyA });
    assert.equal(list.body.results.filter((f: { id: string }) => f.id === answers[0].body.id).length, 1);
  });

  it('refuses text named .png, an unknown binary, an empty file, and a non-multipart body', async () => {
    const text = await upload(srv.url, keyA, Buffer.from('hello, I am not a picture\n'), 'cat.png', { type: 'image/png' });
    assert.equal(text.status, 415);
    assert.match(text.body.detail, /is text, not a PDF, PNG, JPEG or WebP file/);
    const gif = await upload(srv.url, keyA, Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1'), 'x.gif');
    assert.equal(gif.status, 415);
    const empty = await upload(srv.url, keyA, Buffer.alloc(0), 'empty.pdf');
    assert.equal(empty.status, 400);
    assert.match(empty.body.detail, /empty/);
    const json = await srv.request('POST', '/v1/files/', { key: keyA, body: { file: 'x' } });
    assert.equal(json.status, 415);
    assert.match(json.body.detail, /multipart\/form-data/);
    const wrongField = await upload(srv.url, keyA, png(3), 'p.png', { field: 'image' });
    assert.equal(wrongField.status, 400);
    assert.match(wrongField.body.detail, /name the field file/);
    const list = await srv.request('GET', '/v1/files/?limit=200', { key: keyA });
    assert.ok(!list.body.results.some((f: { name: string }) => ['cat.png', 'x.gif', 'empty.pdf', 'p.png'].includes(f.name)));
  });

  it('refuses a file over 20 MB with 413 before storing it', async () => {
    const big = Buffer.concat([png(9), Buffer.alloc(20 * 1024 * 1024 - png(9).length + 1)]);
    const res = await upload(srv.url, keyA, big, 'big.png');
    assert.equal(res.status, 413);
    assert.equal(res.body.limit, 'file_size');
    const exact = Buffer.concat([png(9), Buffer.alloc(20 * 1024 * 1024 - png(9).length)]);
    const ok = await upload(srv.url, keyA, exact, 'exact.png');
    assert.equal(ok.status, 201, JSON.stringify(ok.body));
    assert.equal(ok.body.bytes, 20 * 1024 * 1024);
    assert.equal((await srv.request('DELETE', `/v1/files/${ok.body.id}/`, { key: keyA })).status, 200);
  });
});

describe('the size limit while streaming', () => {
  it('refuses a chunked body (no Content-Length) with 413 once it passes the limit, storing nothing', async () => {
    const boundary = 'xyzzy';
    const before = (await srv.request('GET', '/v1/files/?limit=200', { key: keyA })).body.results.length;
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${srv.url}/v1/files/`, {
        method: 'POST',
        headers: { authorization: `Api-Key ${keyA}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'transfer-encoding': 'chunked' },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.write(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="huge.png"\r\n\r\n`);
      req.write(png(1));
      const chunk = Buffer.alloc(1024 * 1024);
      let sent = 0;
      const more = () => {
        while (sent < 22) {
          sent++;
          if (!req.write(chunk)) return void req.once('drain', more);
        }
        req.end(`\r\n--${boundary}--\r\n`);
      };
      more();
    });
    assert.equal(status, 413);
    assert.equal((await srv.request('GET', '/v1/files/?limit=200', { key: keyA })).body.results.length, before);
  });
});

describe('GET, list and DELETE /v1/files/', () => {
  it("reads metadata and lists newest first; another organization's id is a 404", async () => {
    const up = await upload(srv.url, keyA, pdf('only in A'), 'only-a.pdf');
    assert.equal(up.status, 201);
    const got = await srv.request('GET', `/v1/files/${up.body.id}/`, { key: keyA });
    assert.deepEqual(got.body, up.body);
    const list = await srv.request('GET', '/v1/files/?limit=1', { key: keyA });
    assert.equal(list.status, 200);
    assert.equal(list.body.results[0].id, up.body.id);
    assert.ok(list.body.next_cursor);
    const fromB = await srv.request('GET', `/v1/files/${up.body.id}/`, { key: keyB });
    assert.equal(fromB.status, 404);
    assert.match(fromB.body.detail, new RegExp(up.body.id));
    assert.equal((await srv.request('DELETE', `/v1/files/${up.body.id}/`, { key: keyB })).status, 404);
    assert.ok(!(await srv.request('GET', '/v1/files/?limit=200', { key: keyB })).body.results.some((f: { id: string }) => f.id === up.body.id));
  });

  it('deletes the file and its bytes', async () => {
    const up = await upload(srv.url, keyA, pdf('to delete'), 'gone.pdf');
    assert.ok((await srv.store.files.read(orgA, up.body.id))?.equals(pdf('to delete')));
    const del = await srv.request('DELETE', `/v1/files/${up.body.id}/`, { key: keyA });
    assert.deepEqual(del.body, { deleted: true, id: up.body.id });
    assert.equal((await srv.request('GET', `/v1/files/${up.body.id}/`, { key: keyA })).status, 404);
    assert.equal((await srv.request('DELETE', `/v1/files/${up.body.id}/`, { key: keyA })).status, 404);
    assert.equal(await srv.store.files.read(orgA, up.body.id), null);
    if (srv.store.kind === 'json') assert.ok(!fs.existsSync(path.join(srv.dataDir, 'files', orgA, up.body.id)));
  });
});

describe('dataset items with attachments', () => {
  it('refuses an item naming an unknown file, by its path, and saves nothing', async () => {
    const ds = await srv.request('POST', '/v1/datasets/', { key: keyA, body: { name: `files ${Date.now()}` } });
    const mine = (await upload(srv.url, keyA, png(55), 'mine.png')).body.id;
    const theirs = (await upload(srv.url, keyB, png(56), 'theirs.png')).body.id;
    const bad = await srv.request('POST', `/v1/datasets/${ds.body.id}/items/`, {
      key: keyA,
      body: {
        items: [
          { response: 'ok', attachments: [mine] },
          { response: 'ok', attachments: [mine, theirs] },
        ],
      },
    });
    assert.equal(bad.status, 404);
    assert.deepEqual(bad.body.errors, [{ field: 'items.1.attachments.1', message: `no file ${theirs} in your organization` }]);
    assert.equal((await srv.request('GET', `/v1/datasets/${ds.body.id}/items/`, { key: keyA })).body.results.length, 0);
    const good = await srv.request('POST', `/v1/datasets/${ds.body.id}/items/`, { key: keyA, body: { items: [{ response: 'ok', attachments: [mine] }] } });
    assert.equal(good.status, 201, JSON.stringify(good.body));
    const itemId = good.body.ids[0];
    const patched = await srv.request('PATCH', `/v1/datasets/${ds.body.id}/items/${itemId}/`, { key: keyA, body: { attachments: ['file_unknown'] } });
    assert.equal(patched.status, 404);
    const cleared = await srv.request('PATCH', `/v1/datasets/${ds.body.id}/items/${itemId}/`, { key: keyA, body: { attachments: null } });
    assert.equal(cleared.status, 200, JSON.stringify(cleared.body));
    assert.equal(cleared.body.attachments, undefined);
  });
});

describe('quota and purge', () => {
  it('counts files against the demo quota (count, then bytes), naming the limit; the same bytes again pass', async () => {
    const demo = await srv.demoUser();
    assert.equal((await upload(srv.url, demo.api_key, png(1), '1.png')).status, 201);
    assert.equal((await upload(srv.url, demo.api_key, png(2), '2.png')).status, 201);
    const third = await upload(srv.url, demo.api_key, png(3), '3.png');
    assert.equal(third.status, 413);
    assert.equal(third.body.limit, 'files');
    assert.match(third.body.detail, /TRIBUNAL_DEMO_QUOTA_FILES=2/);
    // Uploading bytes it holds stores nothing: no quota needed.
    assert.equal((await upload(srv.url, demo.api_key, png(1), 'again.png')).status, 200);
    const first = (await srv.request('GET', '/v1/files/', { key: demo.api_key })).body.results[0];
    await srv.request('DELETE', `/v1/files/${first.id}/`, { key: demo.api_key });
    const big = await upload(srv.url, demo.api_key, pdf('x'.repeat(100_001)), 'big.pdf');
    assert.equal(big.status, 413);
    assert.equal(big.body.limit, 'file_bytes');
    assert.match(big.body.detail, /TRIBUNAL_DEMO_QUOTA_FILE_BYTES/);
  });

  it("removes a purged demo organization's files, bytes included", async () => {
    const demo = await srv.demoUser();
    const up = await upload(srv.url, demo.api_key, webp(), 'w.webp');
    assert.equal(up.status, 201);
    assert.ok(await srv.store.files.read(demo.organization_id, up.body.id));
    const dir = path.join(srv.dataDir, 'files', demo.organization_id);
    if (srv.store.kind === 'json') assert.ok(fs.existsSync(dir));
    // Past the key's life and the retention: the sweep purges it.
    const later = Date.now() + srv.config.demoKeyTtlMs + srv.config.demoRetentionMs + 60_000;
    assert.ok((await purgeExpiredDemoOrganizations(srv.store, srv.config, later)) >= 1);
    assert.equal(await srv.store.files.get(demo.organization_id, up.body.id), null);
    assert.equal(await srv.store.files.read(demo.organization_id, up.body.id), null);
    assert.deepEqual(await srv.store.files.usage(demo.organization_id), { count: 0, bytes: 0 });
    if (srv.store.kind === 'json') assert.ok(!fs.existsSync(dir));
  });
});
