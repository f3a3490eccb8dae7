// Attachments (SPEC section 16; src/files/): the file object every files route answers.
import { z } from 'zod';

export const FileObject = z.object({
  id: z.string().describe('file_ and the first 32 hex digits of the SHA-256 of the bytes: the same bytes in your organization answer the same id'),
  name: z.string().describe('the name given at upload (the type never comes from it)'),
  content_type: z.enum(['application/pdf', 'image/png', 'image/jpeg', 'image/webp']).describe('sniffed from the bytes'),
  bytes: z.number().int().describe('size in bytes (at most 20 MB)'),
  sha256: z.string().describe('SHA-256 of the bytes, hex'),
  created_at: z.string().describe('when the bytes were first uploaded'),
});
export type FileObject = z.infer<typeof FileObject>;

/** `attachments` on every execution input: ids of files uploaded with POST /v1/files/. */
export const Attachments = z
  .array(z.string().min(1).max(100))
  .max(20, 'at most 20 attachments per run')
  .describe('ids of files uploaded with POST /v1/files/ (PDF, PNG, JPEG, WebP), given to the judge model as image and document content parts; at most 20');
