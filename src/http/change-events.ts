import type { ChangePage } from '../ports/entity-store.js'
import { fillResourceTemplate } from '../contract/resource-json.js'
import type { Answer } from './answer.js'
import type { ChangesRequest } from './changes.js'
import type { RequestContext } from './context.js'
import { changeTemplate } from './documents.js'
import { HttpError } from './errors.js'

export const EVENT_STREAM_MEDIA_TYPE = 'text/event-stream'

/** Whether Accept asks for server-sent events: `text/event-stream` is named (EventSource sends it alone). */
export function wantsEventStream(accept: string | null): boolean {
  return accept !== null && accept.toLowerCase().includes(EVENT_STREAM_MEDIA_TYPE)
}

/** One open event stream, as the shared timer sees it. */
interface OpenStream {
  /** The bytes the client has not taken yet, past the stream's buffer: a client that reads nothing grows it. */
  backlog(): number
  /** Sends a comment line (proxies close a connection silent for long). */
  beat(): void
  /** Ends the stream (its key is no longer valid, its client stopped reading, shutdown). */
  end(): void
}

export interface OpenStreams {
  add(stream: OpenStream, token: string | null, keyStillValid: () => Promise<boolean>): () => void
  /** Ends every stream and those opened later at once: shutdown. */
  close(): void
  readonly closed: boolean
  /** Streams open. */
  readonly size: number
}

export interface OpenStreamsOptions {
  /** A comment line at least this often (default 15,000 ms). */
  heartbeatMs?: number
  /** Each key with streams open is checked this often (default 1000 ms): a revoked or expired key's streams end. */
  keyCheckMs?: number
}

/** Beats a stream whose client has left this many unread behind it is ended: it stopped reading. */
const MAX_UNREAD_BEATS = 4

/**
 * The event streams open, kept alive and checked by two timers whatever their number: a comment to
 * each every `heartbeatMs`, and every `keyCheckMs` one check a key (not a stream) that it is still
 * valid. The timers run only while a stream is open.
 */
export function createOpenStreams({ heartbeatMs = 15_000, keyCheckMs = 1000 }: OpenStreamsOptions = {}): OpenStreams {
  const byKey = new Map<string | null, { streams: Set<OpenStream>; keyStillValid: () => Promise<boolean> }>()
  let timers: ReturnType<typeof setInterval>[] = []
  let closed = false
  let checking = false
  let size = 0

  const each = (visit: (stream: OpenStream) => void) => {
    for (const { streams } of byKey.values()) for (const stream of [...streams]) visit(stream)
  }
  const checkKeys = async () => {
    if (checking) return
    checking = true
    try {
      await Promise.all(
        [...byKey.values()].map(async (key) => {
          const valid = await key.keyStillValid().catch(() => true)
          if (!valid) for (const stream of [...key.streams]) stream.end()
        }),
      )
    } finally {
      checking = false
    }
  }
  const start = () => {
    timers = [
      setInterval(() => each((stream) => (stream.backlog() > MAX_UNREAD_BEATS ? stream.end() : stream.beat())), heartbeatMs),
      setInterval(() => void checkKeys(), keyCheckMs),
    ]
    // Timers of streams must not hold a process that is otherwise done.
    for (const timer of timers) (timer as { unref?: () => void }).unref?.()
  }
  return {
    get closed() {
      return closed
    },
    get size() {
      return size
    },
    add(stream, token, keyStillValid) {
      if (byKey.size === 0) start()
      let key = byKey.get(token)
      if (key === undefined) byKey.set(token, (key = { streams: new Set(), keyStillValid }))
      key.streams.add(stream)
      size++
      return () => {
        size--
        key.streams.delete(stream)
        if (key.streams.size === 0 && byKey.get(token) === key) byKey.delete(token)
        if (byKey.size === 0) {
          timers.forEach(clearInterval)
          timers = []
        }
      }
    },
    close() {
      closed = true
      each((stream) => stream.end())
    },
  }
}

const encoder = new TextEncoder()

/**
 * The change feed as server-sent events, from `page[after]` or the `Last-Event-ID` header (which
 * wins): `event: change` with the change's id and its resource as one line of JSON, in feed order;
 * `event: cursor` where the feed moved past changes that do not match (so that a reconnect starts
 * after them); a comment at least every 15 s. The feed is read as the client takes the events (the
 * stream's `pull`): a client that reads slowly slows its own reads, one that stops is ended. Once at
 * the head, it waits with the long-polls (`FeedWaits`), a read of the feed shared a wake.
 */
export function changeEventStream(context: RequestContext, changes: ChangesRequest): Answer {
  const { request, store, waits, streams, links } = context
  const lastEventId = request.headers.get('Last-Event-ID')
  if (lastEventId !== null && lastEventId !== '' && !store.isChangeId(lastEventId)) {
    throw new HttpError('invalid_pagination', 'Last-Event-ID must be the id of an event of this stream')
  }
  if (streams.closed || !waits.hasRoom()) {
    throw new HttpError('too_many_waiting', 'too many requests wait for changes on this instance; retry later', undefined, { 'Retry-After': '2' })
  }
  context.holdOpen?.()
  let cursor = lastEventId !== null && lastEventId !== '' ? lastEventId : changes.query.after
  const abort = new AbortController()
  let open = true
  let unread = 0
  let remove: () => void = () => {}
  let controller!: ReadableStreamDefaultController<Uint8Array>
  const send = (text: string) => {
    if (open) controller.enqueue(encoder.encode(text))
  }
  const end = () => {
    if (!open) return
    open = false
    abort.abort()
    remove()
    controller.close()
  }
  const sendPage = (page: ChangePage) => {
    for (const change of page.changes) {
      const resource = fillResourceTemplate(changeTemplate(change, changes.metaOf(change)), links.base)
      send(`event: change\nid: ${change.changeId}\ndata: ${resource}\n\n`)
    }
    if (page.cursor !== cursor && page.cursor !== null && page.changes.at(-1)?.changeId !== page.cursor) {
      send(`event: cursor\nid: ${page.cursor}\ndata: ${JSON.stringify({ cursor: page.cursor })}\n\n`)
    }
    if (page.cursor !== null) cursor = page.cursor
  }
  let caughtUp = false
  /** The wakes seen as of the last read of the feed for this stream (its own, or a shared one). */
  let since = waits.generation
  const body = new ReadableStream<Uint8Array>(
    {
      start(given) {
        controller = given
        remove = streams.add(
          {
            backlog: () => (open && (controller.desiredSize ?? 0) <= 0 ? unread : 0),
            beat() {
              unread = (controller.desiredSize ?? 0) <= 0 ? unread + 1 : 0
              send(': keep-alive\n\n')
            },
            end,
          },
          context.token,
          context.keyStillValid,
        )
        // A first line at once: the client (and any proxy) sees the stream open.
        send(': change feed\n\n')
      },
      // One step a pull: a page read, or a wait at the head. The stream asks again while the client takes them.
      async pull() {
        try {
          if (!caughtUp) {
            since = waits.generation
            const page = await store.listChanges({ ...changes.query, after: cursor })
            sendPage(page)
            caughtUp = !page.hasMore
            if (!caughtUp || page.changes.length > 0) return
          }
          const waited = await waits.wait({ shape: changes.shape, query: { ...changes.query, after: cursor }, kind: 'stream', since, signal: abort.signal, wakeOnCursor: true })
          const { page, closed } = waited
          if (closed) return end()
          since = waited.since
          sendPage(page)
          caughtUp = !page.hasMore
        } catch {
          // The store away, or the client gone: the client reconnects with its Last-Event-ID.
          end()
        }
      },
      cancel() {
        if (!open) return
        open = false
        abort.abort()
        remove()
      },
    },
    { highWaterMark: 16 },
  )
  return {
    status: 200,
    headers: { 'Content-Type': EVENT_STREAM_MEDIA_TYPE, 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' },
    body,
  }
}
