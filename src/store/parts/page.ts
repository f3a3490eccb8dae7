// Pages and visibility: what every listing part of the store shares (store/types.ts re-exports them).

/** Newest first: created_at desc, then id desc. `after` is the last item of the previous page. */
export interface PageQuery {
  limit: number;
  after?: { created_at: string; id: string };
}
export interface Page<T> {
  items: T[];
  /** Present when there may be more items. */
  last?: { created_at: string; id: string };
}

/** What a caller may see: its own org's resources, plus public ones when include_public. */
export interface Visible {
  org_id: string;
  include_public: boolean;
  /** issue 26: the shipped presets (no organization) even when include_public is false. */
  include_presets?: boolean;
}

/** Newest-first ordering shared by every store: created_at desc, id desc. */
export function newestFirst(a: { created_at: string; id: string }, b: { created_at: string; id: string }): number {
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? 1 : -1;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

/** True when `item` comes strictly after the cursor position in newest-first order. */
export function isAfter(item: { created_at: string; id: string }, after: { created_at: string; id: string }): boolean {
  return newestFirst(after, item) < 0;
}
