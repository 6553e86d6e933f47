import type { WaitEnder } from '../live-feed/feed-waits.js'
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

/** Where a stream's events are written when an adapter writes them itself (the Node adapter, to its response). */
export interface EventSink {
  write(bytes: Uint8Array): void
  /** Whether the client's buffer is full: no step is taken until `resume`, and a heartbeat counts as unread. */
  full(): boolean
  end(): void
}

/** What an adapter writing the events itself drives: `resume` once the client took the buffered bytes; `cancel` once it left. */
export interface EventWriting {
  resume(): void
  cancel(): void
}

/**
 * The key under which an event stream keeps how to write its events to a sink of the adapter's: the
 * Node adapter writes them to the response, with no Web stream read in between (a reader, a pending
 * read and its promise a stream, each event through them: a tenth of the server's time waking 10,000
 * streams). Any other adapter reads the Web stream; both run the same steps.
 */
export const EVENT_SINK = Symbol.for('entity-registry.eventSink')

export type EventStream = ReadableStream<Uint8Array> & { [EVENT_SINK](sink: EventSink): EventWriting }

export function isEventStream(body: ReadableStream<Uint8Array>): body is EventStream {
  return typeof (body as Partial<EventStream>)[EVENT_SINK] === 'function'
}

/**
 * The change feed as server-sent events, from `page[after]` or the `Last-Event-ID` header (which
 * wins): `event: change` with the change's id and its resource as one line of JSON, in feed order;
 * `event: cursor` where the feed moved past changes that do not match (so that a reconnect starts
 * after them); a comment at least every 15 s. The feed is read as the client takes the events (a
 * step, a read or a wait, each time the client's buffer has room): a client that reads slowly slows
 * its own reads, one that stops is ended. Once at the head, it waits with the long-polls
 * (`FeedWaits`), a read of the feed shared a wake. Its body is a Web stream, or written to an
 * adapter's sink (`EVENT_SINK`): whichever is taken first, the other is never.
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
  /** Ends the stream's wait, if it waits, when the stream ends. */
  const ender: WaitEnder = {}
  let open = true
  let unread = 0
  let remove: () => void = () => {}
  let sink!: EventSink
  const send = (bytes: Uint8Array) => {
    if (open) sink.write(bytes)
  }
  const end = () => {
    if (!open) return
    open = false
    ender.end?.()
    remove()
    sink.end()
  }
  const cancel = () => {
    if (!open) return
    open = false
    ender.end?.()
    remove()
  }
  const sendPage = (page: ChangePage) => {
    send(eventsOf(page, cursor, changes, links.base))
    if (page.cursor !== null) cursor = page.cursor
  }
  const begin = (given: EventSink) => {
    sink = given
    remove = streams.add(
      {
        backlog: () => (open && sink.full() ? unread : 0),
        beat() {
          unread = sink.full() ? unread + 1 : 0
          send(KEEP_ALIVE)
        },
        end,
      },
      context.token,
      context.keyStillValid,
    )
    // A first line at once: the client (and any proxy) sees the stream open.
    send(OPENED)
  }

  let caughtUp = false
  /** The wakes seen as of the last read of the feed for this stream (its own, or a shared one). */
  let since = waits.generation
  /** One step: a page read, or a wait at the head. */
  const step = async () => {
    try {
      if (!caughtUp) {
        since = waits.generation
        const page = await store.listChanges({ ...changes.query, after: cursor })
        sendPage(page)
        caughtUp = !page.hasMore
        if (!caughtUp || page.changes.length > 0) return
      }
      if (!open) return
      const waited = await waits.wait({ shape: changes.shape, query: { ...changes.query, after: cursor }, kind: 'stream', since, ender, wakeOnCursor: true })
      const { page, closed } = waited
      if (closed) return end()
      since = waited.since
      sendPage(page)
      caughtUp = !page.hasMore
    } catch {
      // The store away, or the client gone: the client reconnects with its Last-Event-ID.
      end()
    }
  }

  const body = new ReadableStream<Uint8Array>(
    {
      // Read when the client reads, not before: an adapter may take the sink instead.
      async pull(controller) {
        if (sink === undefined) {
          begin({ write: (bytes) => controller.enqueue(bytes), full: () => (controller.desiredSize ?? 0) < 0, end: () => controller.close() })
        }
        await step()
      },
      cancel,
    },
    { highWaterMark: 0 },
  )
  const writeTo = (given: EventSink): EventWriting => {
    let running = false
    const run = async () => {
      if (running) return
      running = true
      while (open && !sink.full()) await step()
      running = false
    }
    begin(given)
    void run()
    return { resume: () => void run(), cancel }
  }
  return {
    status: 200,
    headers: { 'Content-Type': EVENT_STREAM_MEDIA_TYPE, 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' },
    body: Object.assign(body, { [EVENT_SINK]: writeTo }),
  }
}
