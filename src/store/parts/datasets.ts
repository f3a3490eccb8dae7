// Store part for datasets and their items.
import type { Dataset, DatasetItem } from '../../schemas.ts';
import type { Page, PageQuery } from './page.ts';

/** `item_count` is kept by the store: what a caller gives on create is ignored. */
export type DatasetRecord = Dataset & { org_id: string };
/** `turns`/`system_prompt` are absent on items stored before conversations were accepted; absent reads as null (itemToWire). */
export type DatasetItemRecord = Omit<DatasetItem, 'turns' | 'system_prompt'> & { turns?: DatasetItem['turns']; system_prompt?: DatasetItem['system_prompt'] };

export interface DatasetFilter {
  org_id: string;
  project_id?: string;
  name?: string;
  search?: string;
}

/** Items are paged in insertion order; `after` is the position (`last`) of the previous page's end. */
export interface ItemPageQuery {
  limit: number;
  after?: number;
}
export interface ItemPage {
  items: DatasetItemRecord[];
  /** The position of the last item, present when there may be more. */
  last?: number;
}

export interface DatasetStore {
  /** Names are unique per org. */
  createDataset(dataset: DatasetRecord): Promise<void>;
  getDataset(id: string): Promise<DatasetRecord | null>;
  listDatasets(filter: DatasetFilter, page: PageQuery): Promise<Page<DatasetRecord>>;
  updateDataset(id: string, patch: { name?: string; description?: string; updated_at: string }): Promise<DatasetRecord | null>;
  /** Deletes the dataset and every item in it (logs of runs over it stay). */
  deleteDataset(id: string): Promise<boolean>;
  /** Appends items in the given order, all or none; false when the dataset does not exist. */
  addDatasetItems(datasetId: string, items: DatasetItemRecord[]): Promise<boolean>;
  getDatasetItem(datasetId: string, itemId: string): Promise<DatasetItemRecord | null>;
  listDatasetItems(datasetId: string, page: ItemPageQuery): Promise<ItemPage>;
  /** Replaces an item (same id, same position); false when it does not exist. */
  updateDatasetItem(datasetId: string, item: DatasetItemRecord): Promise<boolean>;
  deleteDatasetItem(datasetId: string, itemId: string): Promise<boolean>;
}
