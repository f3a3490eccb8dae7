// Attachments (SPEC section 16, docs/SURFACE.md "Attachments"): a file uploaded once per organization
// and named by its id in `attachments` on any run. The id comes from the bytes, so uploading the same
// bytes again answers the same file and stores nothing. Checked here: the type (from the bytes), the
// size, and the organization's quota (count and bytes) before anything is stored.
import { createHash } from 'node:crypto';
import type { RequestContext } from '../context.ts';
import { notFound, TribunalError } from '../errors.ts';
import { quotaLimits, setting } from '../quotas/quotas.ts';
import type { FileObject } from '../schemas/files.ts';
import type { FileRecord, Page, PageQuery } from '../store/types.ts';
import { ATTACHMENT_TYPES, describeBytes, sniffType } from './sniff.ts';

type Ctx = Pick<RequestContext, 'store' | 'caller' | 'config'>;

/** The largest file (SPEC section 16): 20 MB. */
export const MAX_FILE_BYTES = 20 * 1024 * 1024;

export const fileIdOf = (sha256: string) => `file_${sha256.slice(0, 32)}`;

export const fileToWire = ({ org_id: _org, ...wire }: FileRecord): FileObject => wire;

export function fileTooLarge(): TribunalError {
  return new TribunalError('payload_too_large', 413, `The file is over ${MAX_FILE_BYTES} bytes (20 MB), the largest attachment; send a smaller or compressed file.`, {
    extra: { limit: 'file_size', limit_value: MAX_FILE_BYTES },
  });
}

/** The name shown back: no path, no control characters, at most 255 characters. */
function cleanName(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  const clean = base.replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return clean.slice(0, 255) || 'upload';
}

async function checkQuota(ctx: Ctx, adding: number): Promise<void> {
  const limits = quotaLimits(ctx.config, ctx.caller.org);
  const { count, bytes } = await ctx.store.files.usage(ctx.caller.org.id);
  const org = ctx.caller.org;
  if (count >= limits.files) {
    throw new TribunalError(
      'payload_too_large',
      413,
      `This organization holds ${count} files, its limit (${setting(org, 'FILES')}=${limits.files}); delete a file before uploading another.`,
      {
        extra: { limit: 'files', limit_value: limits.files, used: count },
      },
    );
  }
  if (bytes + adding > limits.fileBytes) {
    throw new TribunalError(
      'payload_too_large',
      413,
      `This file's ${adding} bytes would bring this organization's files to ${bytes + adding} bytes, over its limit of ${limits.fileBytes} (${setting(org, 'FILE_BYTES')}); delete files first.`,
      { extra: { limit: 'file_bytes', limit_value: limits.fileBytes, used: bytes } },
    );
  }
}

/** Stores an uploaded file (or answers the one with the same bytes). */
export async function createFile(ctx: Ctx, name: string | undefined, data: Buffer): Promise<{ file: FileObject; created: boolean }> {
  if (!data.length) throw new TribunalError('validation_error', 400, 'The file is empty: send a PDF, PNG, JPEG or WebP file.', { errors: [{ field: 'file', message: 'empty' }] });
  if (data.length > MAX_FILE_BYTES) throw fileTooLarge();
  const type = sniffType(data);
  if (!type) {
    throw new TribunalError(
      'validation_error',
      415,
      `The file is ${describeBytes(data)}, not a PDF, PNG, JPEG or WebP file (the type is read from the bytes, not the name or the declared type). Attachments may be ${ATTACHMENT_TYPES.join(', ')}.`,
      { errors: [{ field: 'file', message: 'not a PDF, PNG, JPEG or WebP file' }] },
    );
  }
  const sha256 = createHash('sha256').update(data).digest('hex');
  const id = fileIdOf(sha256);
  const existing = await ctx.store.files.get(ctx.caller.org.id, id);
  if (existing) return { file: fileToWire(existing), created: false };
  await checkQuota(ctx, data.length);
  const record: FileRecord = { id, org_id: ctx.caller.org.id, name: cleanName(name), content_type: type, bytes: data.length, sha256, created_at: new Date().toISOString() };
  const { record: stored, created } = await ctx.store.files.put(record, data);
  return { file: fileToWire(stored), created };
}

export async function getFile(ctx: Ctx, id: string): Promise<FileObject> {
  const file = await ctx.store.files.get(ctx.caller.org.id, id);
  if (!file) throw notFound('file', id);
  return fileToWire(file);
}

export async function listFiles(ctx: Ctx, page: PageQuery): Promise<Page<FileRecord>> {
  return ctx.store.files.list(ctx.caller.org.id, page);
}

export async function deleteFile(ctx: Ctx, id: string): Promise<{ id: string; deleted: true }> {
  if (!(await ctx.store.files.delete(ctx.caller.org.id, id))) throw notFound('file', id);
  return { id, deleted: true };
}

/**
 * Refuses ids that name no file of the organization, each by its field path (dataset items: a batch
 * run over them would otherwise fail row by row). Nothing is written when one is unknown.
 */
export async function checkFileIds(ctx: Pick<RequestContext, 'store' | 'caller'>, lists: Array<{ field: string; ids?: readonly string[] | null }>): Promise<void> {
  const known = new Map<string, boolean>();
  const errors: Array<{ field: string; message: string }> = [];
  for (const { field, ids } of lists) {
    for (const [i, id] of (ids ?? []).entries()) {
      if (!known.has(id)) known.set(id, (await ctx.store.files.get(ctx.caller.org.id, id)) !== null);
      if (!known.get(id)) errors.push({ field: `${field}.${i}`, message: `no file ${id} in your organization` });
    }
  }
  if (!errors.length) return;
  throw new TribunalError(
    'not_found',
    404,
    `Unknown attachments, nothing was saved: ${errors.map((e) => `${e.field}: ${e.message}`).join('; ')}. Upload files with POST /v1/files/ and pass the ids it answers.`,
    { errors },
  );
}
