import type { ChangePage } from '../ports/entity-store.js'
import { fillResourceTemplate } from '../contract/resource-json.js'
import type { Answer } from './answer.js'
import { tooManyWaiting, type ChangesRequest } from './changes-request.js'
import type { RequestContext } from './context.js'
import { changeTemplate } from './documents.js'
import { HttpError } from './errors.js'

export const EVENT_STREAM_MEDIA_TYPE = 'text/event-stream'

/** Whether Accept asks for server-sent events: `text/event-stream` is named (EventSource sends it alone). */
export function wantsEventStream(accept: string | null): boolean {
  return accept !== null && accept.toLowerCase().includes(EVENT_STREAM_MEDIA_TYPE)
}

const encoder = new TextEncoder()
const OPENED = encoder.encode(': change feed\n\n')
const KEEP_ALIVE = encoder.encode(': keep-alive\n\n')

/**
 * A page's events, as bytes. A read shared by many streams (every stream of a shape waiting at one
 * cursor) hands them the same page: its events are made once for all of them, not once a stream.
 */
const renderedPages = new WeakMap<ChangePage, Map<string, Uint8Array>>()

function eventsOf(page: ChangePage, before: string | null, changes: ChangesRequest, base: string): Uint8Array {
  const key = `${before}\n${base}`
  let rendered = renderedPages.get(page)
  const made = rendered?.get(key)
  if (made !== undefined) return made
  let text = ''
  for (const change of page.changes) {
    const resource = fillResourceTemplate(changeTemplate(change, changes.metaOf(change)), base)
    text += `event: change\nid: ${change.changeId}\ndata: ${resource}\n\n`
  }
  // Past changes that do not match: the position, so that a reconnect starts after them.
  if (page.cursor !== before && page.cursor !== null && page.changes.at(-1)?.changeId !== page.cursor) {
    text += `event: cursor\nid: ${page.cursor}\ndata: ${JSON.stringify({ cursor: page.cursor })}\n\n`
  }
  const bytes = encoder.encode(text)
  if (rendered === undefined) renderedPages.set(page, (rendered = new Map()))
  rendered.set(key, bytes)
  return bytes
}

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
    throw tooManyWaiting()
  }
  context.holdOpen?.()
  let cursor = lastEventId !== null && lastEventId !== '' ? lastEventId : changes.query.after
  const abort = new AbortController()
  let open = true
  let unread = 0
  let remove: () => void = () => {}
  let controller!: ReadableStreamDefaultController<Uint8Array>
  const send = (bytes: Uint8Array) => {
    if (open) controller.enqueue(bytes)
  }
  const end = () => {
    if (!open) return
    open = false
    abort.abort()
    remove()
    controller.close()
  }
  const sendPage = (page: ChangePage) => {
    send(eventsOf(page, cursor, changes, links.base))
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
              send(KEEP_ALIVE)
            },
            end,
          },
          context.token,
          context.keyStillValid,
        )
        // A first line at once: the client (and any proxy) sees the stream open.
        send(OPENED)
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
