// Images and PDFs inside a proxied exchange (issue 30 item 4): an OpenAI message's `image_url` part
// with a data URL, or its `file` part with `file_data`, becomes an attachment the judge model sees
// as the provider's own content part, the same as `attachments` on a REST run. The type is read
// from the bytes (src/files/sniff.ts), never from the URL's declared type. A remote image URL is not
// fetched (the server would otherwise fetch any address a caller names): the judge sees it named in
// the text, `[image_url]`, as before.
import { createHash } from 'node:crypto';
import type { ModelAttachment } from '../engine/providers/model.ts';
import { sniffType } from '../files/sniff.ts';

type Json = Record<string, any>;

const DATA_URL = /^data:[^;,]*(?:;[^;,]*)*;base64,/;

/** The attachment a content part carries inline, or null (text, a remote URL, bytes of another type). */
export function partAttachment(part: Json, index: number): ModelAttachment | null {
  const url = part?.type === 'image_url' ? part.image_url?.url : part?.type === 'file' ? part.file?.file_data : undefined;
  if (typeof url !== 'string') return null;
  const head = DATA_URL.exec(url);
  if (!head) return null;
  const bytes = Buffer.from(url.slice(head[0].length), 'base64');
  const content_type = sniffType(bytes);
  if (!content_type) return null;
  const name = typeof part.file?.filename === 'string' && part.file.filename ? part.file.filename.slice(0, 200) : `part-${index + 1}`;
  return { name, content_type, sha256: createHash('sha256').update(bytes).digest('hex'), data: bytes.toString('base64') };
}

/** Every inline attachment of the messages, in order (the same bytes once). */
export function messagesAttachments(messages: unknown): ModelAttachment[] {
  const found = new Map<string, ModelAttachment>();
  for (const m of Array.isArray(messages) ? (messages as Json[]) : []) {
    if (!Array.isArray(m?.content)) continue;
    for (const part of m.content as Json[]) {
      const a = partAttachment(part, found.size);
      if (a && !found.has(a.sha256)) found.set(a.sha256, a);
    }
  }
  return [...found.values()];
}
