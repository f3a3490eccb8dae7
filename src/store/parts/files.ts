// Store part for attachments (h-attach; store/file-types.ts): bytes and metadata per organization, purged with it.
import type { FileStore } from '../file-types.ts';

export interface FilesPart {
  readonly files: FileStore;
}
