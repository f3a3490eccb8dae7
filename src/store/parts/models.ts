// Store part for registered judge models.
import type { Model } from '../../schemas.ts';
import type { Page, PageQuery } from './page.ts';

/** `api_key_encrypted` is the key sealed with TRIBUNAL_SECRET_KEY (secret-box.ts); null = no key. */
/** `supports_attachments` is absent in records stored before it (read as false). */
export type ModelRecord = Omit<Model, 'supports_attachments'> & { org_id: string; api_key_encrypted: string | null; supports_attachments?: boolean };

export interface ModelStore {
  /** Names are unique per org. */
  createModel(model: ModelRecord): Promise<void>;
  getModel(id: string): Promise<ModelRecord | null>;
  getModelByName(orgId: string, name: string): Promise<ModelRecord | null>;
  listModels(orgId: string, page: PageQuery): Promise<Page<ModelRecord>>;
  /** Replaces the stored record (same id); false when it is gone. */
  updateModel(model: ModelRecord): Promise<boolean>;
  deleteModel(id: string): Promise<boolean>;
}
