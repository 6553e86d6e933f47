import type { FeedWaits, WaitEnder, WaitListener, WaitResult } from '../live-feed/feed-waits.js'
import type { OpenStream } from '../live-feed/open-streams.js'
import type { ChangePage, EntityStore } from '../ports/entity-store.js'
import { fillResourceTemplate } from '../contract/resource-json.js'
import type { Answer, DeferredBody } from './answer.js'
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
 * Node adapter writes them to the response, with no Web stream made or read (a reader, a pending
 * read and its promise a stream, each event through them: a tenth of the server's time waking 10,000
 * streams, and 2.3 KB of heap a stream). Any other adapter reads the Web stream; both run the same steps.
 */
export const EVENT_SINK = Symbol.for('entity-registry.eventSink')

export interface EventStream extends DeferredBody {
  [EVENT_SINK](sink: EventSink): EventWriting
}

export function isEventStream(body: Answer['body']): body is EventStream {
  return typeof (body as Partial<EventStream> | null)?.[EVENT_SINK] === 'function'
}

/**
 * The change feed as server-sent events, from `page[after]` or the `Last-Event-ID` header (which
 * wins): `event: change` with the change's id and its resource as one line of JSON, in feed order;
 * `event: cursor` where the feed moved past changes that do not match (so that a reconnect starts
 * after them); a comment at least every 15 s. The feed is read as the client takes the events (a
 * step, a read or a wait, each time the client's buffer has room): a client that reads slowly slows
 * its own reads, one that stops is ended. Once at the head, it waits with the long-polls
 * (`FeedWaits`), a read of the feed shared a wake. Its body is read as a Web stream (made when
 * asked), or written to an adapter's sink (`EVENT_SINK`): whichever is taken first, the other is never.
 */
export function changeEventStream(context: RequestContext, changes: ChangesRequest): Answer {
  const { request, store, waits, streams } = context
  const lastEventId = request.headers.get('Last-Event-ID')
  if (lastEventId !== null && lastEventId !== '' && !store.isChangeId(lastEventId)) {
    throw new HttpError('invalid_pagination', 'Last-Event-ID must be the id of an event of this stream')
  }
  if (streams.closed || !waits.hasRoom()) {
    throw tooManyWaiting()
  }
  context.holdOpen?.()
  const body = new ChangeEvents(context, changes, lastEventId !== null && lastEventId !== '' ? lastEventId : changes.query.after)
  return { status: 200, headers: { 'Content-Type': EVENT_STREAM_MEDIA_TYPE, 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' }, body }
}

/**
 * One event stream: its state in one object's fields, its steps methods, and no promise or closure
 * held while it waits at the head. A stream lasts hours and ten thousand may be open (a closure a
 * step, a context each, a Web stream never read and three suspended async frames held a stream
 * 3 KB more; bench/README.md). A step is a read of the feed or a wait at the head; `afterStep` is
 * told when it is done.
 */
class ChangeEvents implements EventStream, EventWriting, OpenStream, WaitEnder, WaitListener {
  private readonly store: EntityStore
  private readonly waits: FeedWaits
  private readonly base: string
  private readonly remove: () => void
  private sink: EventSink | undefined
  private open = true
  /** Heartbeats in a row sent while the client's buffer was full. */
  private unread = 0
  private caughtUp = false
  /** The wakes seen as of the last read of the feed for this stream (its own, or a shared one). */
  private since: number
  /** A step under way: what to do once it is done (step again while the client has room, or end a Web stream's pull). */
  private afterStep: (() => void) | undefined
  waiting: { stop(): void } | undefined

  constructor(
    context: RequestContext,
    private readonly changes: ChangesRequest,
    private cursor: string | null,
  ) {
    this.store = context.store
    this.waits = context.waits
    this.base = context.links.base
    this.since = context.waits.generation
    this.remove = context.streams.add(this, context.token, context.keyStillValid)
  }

  backlog(): number {
    return this.open && this.sink?.full() ? this.unread : 0
  }

  beat(): void {
    if (this.sink === undefined) return
    this.unread = this.sink.full() ? this.unread + 1 : 0
    this.send(KEEP_ALIVE)
  }

  /** Ends the stream (its key no longer valid, its client stopped reading, shutdown, the store away). */
  end(): void {
    if (!this.open) return
    this.cancel()
    this.sink?.end()
  }

  /** The client went: nothing more is read or written. */
  cancel(): void {
    if (!this.open) return
    this.open = false
    this.waiting?.stop()
    this.remove()
  }

  readable(): ReadableStream<Uint8Array> {
    return new ReadableStream<Uint8Array>(
      {
        // Read when the client reads, not before: a step a pull.
        pull: (controller) => {
          if (this.sink === undefined) {
            this.begin({ write: (bytes) => controller.enqueue(bytes), full: () => (controller.desiredSize ?? 0) < 0, end: () => controller.close() })
          }
          return new Promise<void>((resolve) => this.step(resolve))
        },
        cancel: () => this.cancel(),
      },
      { highWaterMark: 0 },
    )
  }

  [EVENT_SINK](sink: EventSink): EventWriting {
    this.begin(sink)
    this.resume()
    return this
  }

  /** Steps while the client's buffer has room (an adapter's sink): called again once it took what was buffered. */
  resume(): void {
    if (this.afterStep === undefined) this.stepWhileRoom()
  }

  private stepWhileRoom(): void {
    if (this.open && !this.sink!.full()) this.step(STEP_AGAIN)
  }

  private begin(sink: EventSink): void {
    this.sink = sink
    // Ended before its first write (its key revoked, shutdown): the client sees the end at once.
    if (!this.open) return sink.end()
    // A first line at once: the client (and any proxy) sees the stream open.
    this.send(OPENED)
  }

  private send(bytes: Uint8Array): void {
    if (this.open) this.sink!.write(bytes)
  }

  /** A page's events; a page that cannot be written as events ends the stream (its client reconnects). */
  private sendPage(page: ChangePage): void {
    try {
      this.send(eventsOf(page, this.cursor, this.changes, this.base))
    } catch {
      return this.end()
    }
    if (page.cursor !== null) this.cursor = page.cursor
    this.caughtUp = !page.hasMore
  }

  /** One step: a page read, or a wait at the head; then `then` (STEP_AGAIN: the next while the client has room). */
  private step(then: () => void): void {
    this.afterStep = then
    if (!this.open) return this.stepDone()
    if (this.caughtUp) return this.waitAtHead()
    this.since = this.waits.generation
    this.store.listChanges({ ...this.changes.query, after: this.cursor }).then(
      (page) => {
        this.sendPage(page)
        // A page of changes is a step; an empty one at the head waits.
        if (!this.caughtUp || page.changes.length > 0) this.stepDone()
        else this.waitAtHead()
      },
      // The store away: the client reconnects with its Last-Event-ID.
      () => {
        this.end()
        this.stepDone()
      },
    )
  }

  private waitAtHead(): void {
    if (!this.open) return this.stepDone()
    const { changes } = this
    this.waits.waitFor({ shape: changes.shape, query: { ...changes.query, after: this.cursor }, kind: 'stream', since: this.since, ender: this, wakeOnCursor: true }, this)
  }

  /** The wait at the head ended: a page (or the cursor as it stands), or the registry closing. */
  woken({ page, closed, since }: WaitResult): void {
    if (closed) this.end()
    else {
      this.since = since
      this.sendPage(page)
    }
    this.stepDone()
  }

  private stepDone(): void {
    const then = this.afterStep!
    this.afterStep = undefined
    if (then === STEP_AGAIN) this.stepWhileRoom()
    else then()
  }
}

/** The `afterStep` of an adapter's sink: step again while the client has room. */
const STEP_AGAIN = () => {}
