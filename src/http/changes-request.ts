import type { StoredChange } from '../contract/entity.js'
import type { ListChangesQuery } from '../ports/entity-store.js'
import { HttpError } from './errors.js'

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

/** Seconds a client refused for want of room to wait is told to wait before it asks again. */
const RETRY_AFTER_FULL_SECONDS = 2

/** The answer to a long-poll or an event stream past `maxWaiting` (or once the registry stops waiting). */
export function tooManyWaiting(): HttpError {
  return new HttpError('too_many_waiting', 'too many requests wait for changes on this instance; retry later', undefined, { 'Retry-After': String(RETRY_AFTER_FULL_SECONDS) })
}
