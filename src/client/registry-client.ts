import type { WatchChangesOptions } from './watch-changes.js'
import type { FacetField } from '../contract/fields.js'
import type { MirrorOptions, MirrorResult } from './mirror-options.js'
import type { EntityChange, EntityResource, FacetCounts, Page } from './types.js'

export interface ListOptions {
  /** A GFFS filter of qualifiers, e.g. `type:person jurisdiction:US-WA`. */
  filter?: string
  /** Page size, 1 to 100 (the server's default is 100). */
  limit?: number
  /** Start after this cursor (a previous page's `cursor`). */
  after?: string | null
  signal?: AbortSignal
}

export interface ChangesOptions extends ListOptions {
  /**
   * `either`: a change matches when the entity's snapshot before or after it matches the filter, and
   * each change says in `meta.matchesFilter` whether the entity is in the subset afterwards.
   */
  filterScope?: 'after' | 'either'
  /**
   * Long-poll (1 to 60): a request whose page holds no matching change is held by the server until
   * one commits or this many seconds pass.
   */
  waitSeconds?: number
}

export interface DownloadOptions {
  /** An inclusive byte range; the answer is then 206 with those bytes. */
  range?: { start: number; end?: number }
  signal?: AbortSignal
}

export interface Download {
  status: number
  /** The bytes, streamed. */
  body: ReadableStream<Uint8Array>
  headers: Headers
}

export interface RegistryClient {
  /** The entity, following merges (its `id` is then the surviving entity's). */
  get(id: string, options?: { signal?: AbortSignal }): Promise<EntityResource>
  /** Every matching entity in id order, page after page (`links.next` followed). */
  list(options?: ListOptions): AsyncIterable<EntityResource>
  listPages(options?: ListOptions): AsyncIterable<Page<EntityResource>>
  /** The feed's changes from `after` up to the head, then the iteration ends. */
  changes(options?: ChangesOptions): AsyncIterable<EntityChange>
  changePages(options?: ChangesOptions): AsyncIterable<Page<EntityChange>>
  /**
   * The feed's changes as they commit, never ending (until `signal` aborts or the loop breaks): server-
   * sent events, opened again with `Last-Event-ID` whenever the stream ends, backing off on 429 and
   * 503, so that no change is missed or repeated across reconnections and instances.
   */
  watchChanges(options?: WatchChangesOptions): AsyncIterable<EntityChange>
  /** Up to 100 entities ranked for `q` (GFFS: qualifiers filter, words and phrases rank). */
  search(q: string, options?: { signal?: AbortSignal }): Promise<EntityResource[]>
  /**
   * Facet counts (`/v1/facets`): the entities `filter` matches, and for each of `fields` (default all:
   * type, jurisdiction, localType, authority, status) its 50 most frequent values with their counts.
   */
  facets(options?: { filter?: string; fields?: readonly FacetField[]; signal?: AbortSignal }): Promise<FacetCounts>
  /** A rendition's bytes, by its `links.content` address. */
  download(contentUrl: string, options?: DownloadOptions): Promise<Download>
  /** Keeps a copy of a filtered subset: back-fill, then follow the feed; see `MirrorOptions`. */
  mirror(options: MirrorOptions): Promise<MirrorResult>
}
