// Attachments (SPEC section 16; src/files/): the files an organization uploaded for judge runs.
// The store keeps the bytes and a little metadata; the id comes from the bytes (the same bytes in the
// same organization are one file), so two organizations may hold the same id, each its own copy.

export type AttachmentType = 'application/pdf' | 'image/png' | 'image/jpeg' | 'image/webp';

export interface FileRecord {
  /** `file_` and the first 32 hex digits of the SHA-256 of the bytes. */
  id: string;
  org_id: string;
  /** The name the uploader gave (shown back, never used to decide the type). */
  name: string;
  /** Sniffed from the bytes (src/files/sniff.ts). */
  content_type: AttachmentType;
  bytes: number;
  sha256: string;
  created_at: string;
}

/** The JSON store's metadata table in db.json, keyed "<org>/<id>" (json-files-table.ts). */
export type FileTable = Record<string, FileRecord>;

/** A page position, as the store's PageQuery (not imported: types.ts imports this file). */
interface FilePageQuery {
  limit: number;
  after?: { created_at: string; id: string };
}

export interface FileStore {
  /**
   * Stores the file unless this organization holds its id already: then nothing is written and the
   * stored record is answered (`created: false`). Bytes are durable before the call returns.
   */
  put(record: FileRecord, data: Buffer): Promise<{ record: FileRecord; created: boolean }>;
  get(orgId: string, id: string): Promise<FileRecord | null>;
  /** The bytes, or null when the organization has no such file. */
  read(orgId: string, id: string): Promise<Buffer | null>;
  /** Newest first. */
  list(orgId: string, page: FilePageQuery): Promise<{ items: FileRecord[]; last?: { created_at: string; id: string } }>;
  delete(orgId: string, id: string): Promise<boolean>;
  /** What the organization holds, for its quota. */
  usage(orgId: string): Promise<{ count: number; bytes: number }>;
}
