// The JSON store's attachments: the bytes in <data dir>/files/<org>/<id> (written to a temp file,
// fsynced, renamed, the directory fsynced: a crash leaves the whole file or none), the metadata in
// db.json's "files" table keyed "<org>/<id>". The bytes are on disk before the metadata names them;
// a crash between the two leaves a file nothing names, which the next upload of those bytes reuses.
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { FileRecord, FileStore, FileTable } from './file-types.ts';
import type { FilesPart } from './parts/files.ts';
import type { Page, PageQuery } from './types.ts';
import { clone, orgPage } from './json-data.ts';

/** Ids and organization ids are made by Tribunal; anything else never reaches a path. */
const SAFE = /^[A-Za-z0-9_-]{1,100}$/;

async function fsyncDir(dir: string): Promise<void> {
  const handle = await fsp.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

class JsonFileTable implements FileStore {
  constructor(
    private readonly dir: string,
    private readonly table: () => FileTable,
    private readonly save: () => Promise<void>,
  ) {}

  private pathOf(orgId: string, id?: string): string {
    if (!SAFE.test(orgId) || (id !== undefined && !SAFE.test(id))) throw new Error(`unsafe file path part ${JSON.stringify(id ?? orgId)}`);
    return id === undefined ? path.join(this.dir, orgId) : path.join(this.dir, orgId, id);
  }

  async put(record: FileRecord, data: Buffer) {
    const key = `${record.org_id}/${record.id}`;
    const existing = this.table()[key];
    if (existing) return { record: clone(existing), created: false };
    const target = this.pathOf(record.org_id, record.id);
    const dir = path.dirname(target);
    await fsp.mkdir(dir, { recursive: true });
    const temp = `${target}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    const handle = await fsp.open(temp, 'w');
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fsp.rename(temp, target);
    await fsyncDir(dir);
    // Another upload of the same bytes may have finished while these were written: it wins.
    const raced = this.table()[key];
    if (raced) return { record: clone(raced), created: false };
    this.table()[key] = clone(record);
    await this.save();
    return { record: clone(record), created: true };
  }
  async get(orgId: string, id: string) {
    return clone(this.table()[`${orgId}/${id}`] ?? null);
  }
  async read(orgId: string, id: string) {
    if (!this.table()[`${orgId}/${id}`] || !SAFE.test(id)) return null;
    try {
      return await fsp.readFile(this.pathOf(orgId, id));
    } catch (err) {
      // Deleted between the metadata check and the read (a concurrent DELETE): as if absent.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }
  async list(orgId: string, page: PageQuery): Promise<Page<FileRecord>> {
    return orgPage(this.table(), orgId, page);
  }
  async delete(orgId: string, id: string) {
    const key = `${orgId}/${id}`;
    if (!this.table()[key]) return false;
    delete this.table()[key];
    await this.save();
    // After the metadata is gone: a crash here leaves bytes nothing names (reused or purged later).
    await fsp.rm(this.pathOf(orgId, id), { force: true });
    return true;
  }
  async usage(orgId: string) {
    let count = 0;
    let bytes = 0;
    for (const f of Object.values(this.table())) {
      if (f.org_id !== orgId) continue;
      count++;
      bytes += f.bytes;
    }
    return { count, bytes };
  }
}

/** The files part of the JSON store: bytes under `dir`, metadata in db.json's table (read late: init loads it). */
export function jsonFiles(dir: string, table: () => FileTable, save: () => Promise<void>): FilesPart {
  return { files: new JsonFileTable(dir, table, save) };
}

/**
 * After an organization's purge is committed (its metadata left with db.json's other tables): its
 * directory of bytes, so no metadata ever names missing bytes.
 */
export async function dropFileBytes(dir: string, orgId: string): Promise<void> {
  if (SAFE.test(orgId)) await fsp.rm(path.join(dir, orgId), { recursive: true, force: true });
}
