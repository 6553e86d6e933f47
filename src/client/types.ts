import type { z } from 'zod'
import type { entityChangeResourceSchema, entityResourceSchema, facetsDocumentSchema } from '../contract/schemas.js'

/** An entity resource, as list, get and search answer it. */
export type EntityResource = z.infer<typeof entityResourceSchema>

/** A change resource of the feed. */
export type EntityChange = z.infer<typeof entityChangeResourceSchema>

/** `client.facets`: how many entities a filter matches, and how many have each value of the fields asked. */
export type FacetCounts = z.infer<typeof facetsDocumentSchema>['meta']

/** One page of a collection: its resources, where the next page is, and the feed head it was served at. */
export interface Page<T> {
  data: T[]
  /** `meta.cursor`: pass it as `after` to continue from this page. */
  cursor: string | null
  /** `links.next`, absent on the last page (for the feed: at the head). */
  next: string | null
  /** The `Change-Feed-Head` header: the newest change visible when the page was served. */
  feedHead: string | null
}
