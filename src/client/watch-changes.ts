import type { ServerSentEvent } from './server-sent-events.js'
import { readServerSentEvents } from './server-sent-events.js'
import { sleep } from './retry.js'
import type { EntityChange } from './types.js'

export interface WatchChangesOptions {
  /** GFFS qualifiers; default every change (`-type:""`). */
  filter?: string
  /** `either`: changes that take an entity out of the subset too, each with `meta.matchesFilter`. */
  filterScope?: 'after' | 'either'
  /** Start after this change id (a `meta.cursor`, a change's id); default the start of the feed. */
  after?: string | null
  /**
   * Told of each position the stream reaches, a change's id or a cursor past changes that do not
   * match: save it, and pass it as `after` to resume there.
   */
  onCursor?: (cursor: string) => void
  signal?: AbortSignal
}

/** How a watch opens its stream: the client's request, retried on 429 (after Retry-After), 5xx and network errors. */
export type OpenStream = (url: string, headers: Record<string, string>, signal?: AbortSignal) => Promise<Response>

/** After a stream that ended at once, the next is opened no sooner than this (doubling to the cap). */
const RECONNECT_MIN_MS = 250
const RECONNECT_MAX_MS = 30_000

/**
 * The feed's matching changes as they commit, over server-sent events, for as long as the caller
 * iterates (or until `signal` aborts): a stream that ends (the instance shut down or died, a proxy
 * cut it) is opened again with `Last-Event-ID`, on whatever instance answers, so that no change is
 * missed or repeated. Opening is retried as every request is (backing off on 429 and 503).
 */
export async function* watchChanges(open: OpenStream, url: string, { after = null, onCursor, signal }: WatchChangesOptions): AsyncGenerator<EntityChange> {
  let lastEventId = after
  let quickEnds = 0
  for (;;) {
    signal?.throwIfAborted()
    const response = await open(url, { Accept: 'text/event-stream', ...(lastEventId === null ? {} : { 'Last-Event-ID': lastEventId }) }, signal)
    const opened = Date.now()
    let received = false
    try {
      for await (const event of readServerSentEvents(response.body!) as AsyncGenerator<ServerSentEvent>) {
        received = true
        if (event.id !== undefined && event.id !== '') lastEventId = event.id
        if (event.event === 'change') yield JSON.parse(event.data) as EntityChange
        if (event.id !== undefined && event.id !== '') onCursor?.(event.id)
      }
    } catch (error) {
      // The connection lost mid-stream: open it again, unless the caller stopped.
      if (signal?.aborted) throw error
    }
    // A stream that ends at once, again and again, must not become a loop of requests.
    quickEnds = received || Date.now() - opened > RECONNECT_MAX_MS ? 0 : quickEnds + 1
    if (quickEnds > 0) await sleep(Math.min(RECONNECT_MAX_MS, RECONNECT_MIN_MS * 2 ** (quickEnds - 1)), signal)
  }
}
