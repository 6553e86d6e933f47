import type { BlobStore } from '../ports/blob-store.js'
import type { EntityStore } from '../ports/entity-store.js'
import type { Search } from '../search/search-service.js'
import type { Answer, RequestView } from './answer.js'
import type { Links } from './links.js'
import type { FeedWaits } from '../live-feed/feed-waits.js'
import type { OpenStreams } from '../live-feed/open-streams.js'

/** What every endpoint handler gets: the parsed request and the registry's services. */
export interface RequestContext {
  request: RequestView
  url: URL
  /** Path parameters, percent-encoded as in the request. */
  params: Record<string, string>
  links: Links
  /** A HEAD request: answer the headers of GET and skip work only the body needs. */
  head: boolean
  store: EntityStore
  blobs: BlobStore | undefined
  /** Absent: search is switched off (404 search_disabled); a promise that gives none: 500 search_failed. */
  search: Search | PromiseLike<Search | undefined> | undefined
  /** How many change records one changes request scans at most. */
  changesWindow: number
  /** The requests waiting for the change feed (long-polls and event streams). */
  waits: FeedWaits
  /** The event streams open, which one timer keeps alive and checks the keys of. */
  streams: OpenStreams
  /** Whether the request's key is still valid (not revoked nor expired since): streams ask it again. */
  keyStillValid: () => Promise<boolean>
  /** The request's bearer token: streams of one key share its checks. */
  token: string | null
  /** Lifts the adapter's idle timeouts for this request: it is about to wait, or to stream. */
  holdOpen: (() => void) | undefined
  /** Filled in as the request is routed: the pattern of the route that answers it. */
  trace: { route: string | null }
}

export type EndpointHandler = (context: RequestContext) => Promise<Answer>
