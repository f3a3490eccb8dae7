// The Store contract for attachments (h-attach; store.files), run by defineStoreContract on every
// store: put is idempotent per (organization, id) and keeps the first record, bytes read back exact,
// lists page newest first, usage counts, delete, organizations are isolated, and purge empties them.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { FileRecord, Store } from '../src/store/types.ts';
import { org } from './store-contract.ts';

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();

function fileRecord(orgId: string, over: Partial<FileRecord> = {}): FileRecord {
  const hex = randomBytes(32).toString('hex');
  return { id: `file_${hex.slice(0, 32)}`, org_id: orgId, name: 'a.png', content_type: 'image/png', bytes: 3, sha256: hex, created_at: at(0), ...over };
}

export function defineFilesContract(fresh: () => Promise<Store>): void {
  describe('files (attachments)', () => {
    it('puts once per organization and id, reads the bytes back, pages newest first, counts usage, deletes', async () => {
      const store = await fresh();
      const o = org();
      await store.createOrganization(o);
      const a = fileRecord(o.id, { created_at: at(1), bytes: 3 });
      const b = fileRecord(o.id, { created_at: at(2), bytes: 4, content_type: 'application/pdf', name: 'b.pdf' });
      assert.deepEqual(await store.files.put(a, Buffer.from([1, 2, 3])), { record: a, created: true });
      assert.deepEqual(await store.files.put({ ...a, name: 'again.png', created_at: at(9) }, Buffer.from([1, 2, 3])), { record: a, created: false });
      await store.files.put(b, Buffer.from('%PDF'));
      assert.deepEqual(await store.files.get(o.id, a.id), a);
      assert.ok((await store.files.read(o.id, a.id))?.equals(Buffer.from([1, 2, 3])));
      const first = await store.files.list(o.id, { limit: 1 });
      assert.deepEqual(first.items, [b]);
      assert.ok(first.last);
      assert.deepEqual((await store.files.list(o.id, { limit: 1, after: first.last })).items, [a]);
      assert.deepEqual(await store.files.usage(o.id), { count: 2, bytes: 7 });
      assert.equal(await store.files.delete(o.id, a.id), true);
      assert.equal(await store.files.delete(o.id, a.id), false);
      assert.equal(await store.files.get(o.id, a.id), null);
      assert.equal(await store.files.read(o.id, a.id), null);
      assert.deepEqual(await store.files.usage(o.id), { count: 1, bytes: 4 });
    });

    it('keeps organizations apart (the same id in two is two files) and goes with a purged organization', async () => {
      const store = await fresh();
      const mine = org({ is_demo: true });
      const theirs = org();
      await store.createOrganization(mine);
      await store.createOrganization(theirs);
      const f = fileRecord(mine.id);
      await store.files.put(f, Buffer.from('abc'));
      assert.equal(await store.files.get(theirs.id, f.id), null);
      assert.equal(await store.files.read(theirs.id, f.id), null);
      const copy = { ...f, org_id: theirs.id, name: 'copy.png' };
      assert.equal((await store.files.put(copy, Buffer.from('abc'))).created, true);
      await store.purgeOrganization(mine.id);
      assert.equal(await store.files.get(mine.id, f.id), null);
      assert.deepEqual(await store.files.usage(mine.id), { count: 0, bytes: 0 });
      assert.deepEqual(await store.files.get(theirs.id, f.id), copy);
    });
  });
}
