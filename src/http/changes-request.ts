import type { StoredChange } from '../contract/entity.js'
import type { ListChangesQuery } from '../ports/entity-store.js'

export type FilterScope = 'after' | 'either'

/** What a changes request reads, parsed: the store's query, and the shape requests that read alike share. */
export interface ChangesRequest {
  query: ListChangesQuery
  /** The filter as written, its scope and the page size: waiters of one shape share a read of the feed. */
  shape: string
  scope: FilterScope
  /** Per change, its `meta` (`filterScope=either`: whether the entity is in the subset after it). */
  metaOf(change: StoredChange): Record<string, unknown> | undefined
}
