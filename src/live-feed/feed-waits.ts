import { decodeChangeId } from '../contract/change-id.js'
import type { ChangeNotifier } from '../ports/change-notifier.js'
import type { ChangePage, EntityStore, ListChangesQuery } from '../ports/entity-store.js'

/** What waits: a long-poll (answers once), or an event stream (waits again after each page). */
export type WaitKind = 'long-poll' | 'stream'

export interface WaitRequest {
  /**
   * Requests of one shape ask the same read of the feed but for its cursor: the filter as written,
   * its scope and the page size. Waiters of a shape at one cursor share one read a wake.
   */
  shape: string
  /** The read: its `after` is where the waiter's own read ended (the feed's head, as it saw it). */
  query: ListChangesQuery
  kind: WaitKind
  /** `generation` before the waiter's own read: a wake since then is not missed. */
  since: number
  /**
   * Given, the wait sets its `waiting` while it waits: `stop()` ends the wait with the cursor as it
   * stands (the client went away). A field, not an AbortSignal: no listener added and removed a wait.
   */
  ender?: WaitEnder
  /** Ends the wait with the cursor as it stands after this long (a plain timer: no signal a waiter). */
  timeoutMs?: number
  /** A stream hears of its cursor moving past changes that do not match; a long-poll waits on. */
  wakeOnCursor?: boolean
}

/** What ends a wait from outside: `waiting` is set while one waits, and unset once it ended. */
export interface WaitEnder {
  waiting?: { stop(): void } | undefined
}

/** Told how a wait ended (`FeedWaits.waitFor`). */
export interface WaitListener {
  woken(result: WaitResult): void
}

/** How a wait ended: a page with matching changes (or more to read), or the cursor as it stands. */
export interface WaitResult {
  page: ChangePage
  /** The registry is shutting down: answer now, and hold the client no longer. */
  closed: boolean
  /** `generation` as the page's read began: the `since` of the next wait after it. */
  since: number
}

export interface FeedWaits {
  /** Counts wakes: a waiter takes it before its own read. */
  readonly generation: number
  /** The feed's head as the last wake read it (null before any). */
  readonly head: string | null
  /** Waiting requests by kind. */
  counts(): Record<WaitKind, number>
  /** Whether one more may wait: fewer than `maxWaiting` long-polls and others (`alsoWaiting`) wait. */
  hasRoom(): boolean
  wait(request: WaitRequest): Promise<WaitResult>
  /**
   * `wait`, its end told to `listener`: no promise or closure is held while it waits (an event
   * stream waits so, at the head, for hours). Told at once when the waits are closed.
   */
  waitFor(request: WaitRequest, listener: WaitListener): void
  /**
   * A read of the feed, shared with an identical one in flight: long-polls answered by one wake ask
   * again at once, all alike. `since`: `generation` as the read began, for the wait after it.
   * `toWait`: the read of a request that waits when the page is empty; at or past the head the last
   * wake read, with no wake since (the notifier watching throughout), the page is known empty and
   * nothing is read: a wake's long-polls ask again from that head, and the wait reads for them.
   */
  read(shape: string, query: ListChangesQuery, toWait?: boolean): Promise<{ page: ChangePage; since: number }>
  /** The feed's head, read once for the requests that ask for it at the same time. */
  readHead(): Promise<string | null>
  /** Ends every wait (each answers its cursor, `closed`), and those begun later at once. */
  close(): void
}

interface Group {
  shape: string
  query: ListChangesQuery
  waiters: Set<Waiter>
}

/** One waiting request: a class, so that ten thousand hold their fields and share their methods. */
class Waiter {
  timer: ReturnType<typeof setTimeout> | undefined
  constructor(
    readonly kind: WaitKind,
    readonly wakeOnCursor: boolean,
    public group: Group,
    /** `generation` before the waiter's own read, told when it ends with the cursor as it stands. */
    private readonly since: number,
    private readonly ender: WaitEnder | undefined,
    private readonly listener: WaitListener,
    private readonly leave: (waiter: Waiter) => void,
  ) {}

  end(page: ChangePage | null, closed: boolean, readSince: number): void {
    clearTimeout(this.timer)
    if (this.ender !== undefined) this.ender.waiting = undefined
    // Without a page: the cursor as it stands.
    const told = page ?? { changes: [], cursor: this.group.query.after, hasMore: false }
    this.leave(this)
    this.listener.woken({ page: told, closed, since: readSince })
  }

  /** Ends the wait with the cursor as it stands: its time is up, or its client went. */
  stop(): void {
    this.end(null, false, this.since)
  }
}

const stopWaiter = (waiter: Waiter) => waiter.stop()

const keyOf = (shape: string, after: string | null) => `${after ?? ''}\n${shape}`
const positionOf = (cursor: string | null) => (cursor === null ? 0 : (decodeChangeId(cursor) ?? 0))

/**
 * The requests waiting for the change feed to move, grouped by what they read. On a wake (the
 * notifier's), the feed's head is read once; then each group whose cursor is behind it reads its
 * page once, for all its waiters. A group whose read finds only changes that do not match moves its
 * cursor and waits on; one that finds a match answers every waiter. Nothing is read while no
 * notifier wakes it: waiting costs no query, and the notifier is subscribed only while one waits.
 */
export function createFeedWaits(
  store: EntityStore,
  notifier: ChangeNotifier,
  { maxWaiting = 10_000, alsoWaiting = () => 0 }: { maxWaiting?: number; alsoWaiting?: () => number } = {},
): FeedWaits {
  const groups = new Map<string, Group>()
  const waiters = new Set<Waiter>()
  const counts: Record<WaitKind, number> = { 'long-poll': 0, stream: 0 }
  let generation = 0
  let lastHead: string | null = null
  /** `generation` as the read of `lastHead` began, while the notifier has watched since; null otherwise. */
  let headGeneration: number | null = null
  const reads = new Map<string, Promise<{ page: ChangePage; since: number }>>()
  let headRead: Promise<string | null> | undefined
  let unsubscribe: (() => void) | undefined
  let closed = false
  let reading = false
  let again = false

  const wake = () => {
    generation++
    if (reading) {
      again = true
      return
    }
    reading = true
    void readForGroups().finally(() => {
      reading = false
      if (again) {
        again = false
        wake()
      }
    })
  }

  async function readForGroups(): Promise<void> {
    if (groups.size === 0) return
    const since = generation
    let head: number
    try {
      // Its own read, not `readHead`'s shared one: a read in flight may have begun before the commit that woke this.
      lastHead = await store.feedHead()
      headGeneration = unsubscribe === undefined ? null : since
      head = positionOf(lastHead)
    } catch {
      // The store away: the waiters wait on, until a later wake or their time is up.
      return
    }
    const behind = [...groups.values()].filter((group) => positionOf(group.query.after) < head)
    await Promise.all(behind.map((group) => readFor(group, since)))
  }

  async function readFor(group: Group, since: number): Promise<void> {
    let page: ChangePage
    try {
      page = await store.listChanges(group.query)
    } catch {
      return
    }
    // Waiters that came while it read are served by it too; the group is gone if they all went.
    if (groups.get(keyOf(group.shape, group.query.after)) !== group) return
    groups.delete(keyOf(group.shape, group.query.after))
    const found = page.changes.length > 0 || page.hasMore
    // Past changes that do not match, the cursor moves: the long-polls wait on from there.
    const moved = found ? undefined : groupFor(group.shape, { ...group.query, after: page.cursor })
    for (const waiter of group.waiters) {
      if (moved === undefined || waiter.wakeOnCursor) waiter.end(page, false, since)
      else {
        waiter.group = moved
        moved.waiters.add(waiter)
      }
    }
    if (moved !== undefined && moved.waiters.size === 0) groups.delete(keyOf(moved.shape, moved.query.after))
  }

  function groupFor(shape: string, query: ListChangesQuery): Group {
    const key = keyOf(shape, query.after)
    let group = groups.get(key)
    if (group === undefined) {
      group = { shape, query, waiters: new Set() }
      groups.set(key, group)
    }
    return group
  }

  function leave(waiter: Waiter) {
    waiters.delete(waiter)
    counts[waiter.kind]--
    const { group } = waiter
    group.waiters.delete(waiter)
    const key = keyOf(group.shape, group.query.after)
    if (group.waiters.size === 0 && groups.get(key) === group) groups.delete(key)
    if (waiters.size === 0 && unsubscribe !== undefined) {
      unsubscribe()
      unsubscribe = undefined
      // Unwatched, a commit wakes nothing: the head read last is no longer known to be the head.
      headGeneration = null
    }
  }

  function waitFor({ shape, query, kind, since, ender, timeoutMs, wakeOnCursor = false }: WaitRequest, listener: WaitListener): void {
    if (closed) return listener.woken({ page: { changes: [], cursor: query.after, hasMore: false }, closed, since })
    const waiter = new Waiter(kind, wakeOnCursor, groupFor(shape, query), since, ender, listener, leave)
    // Its time as a plain timer with the waiter as its argument: no closure a waiter.
    if (timeoutMs !== undefined) waiter.timer = setTimeout(stopWaiter, timeoutMs, waiter)
    if (ender !== undefined) ender.waiting = waiter
    waiter.group.waiters.add(waiter)
    waiters.add(waiter)
    counts[kind]++
    const subscribing = unsubscribe === undefined
    if (subscribing) unsubscribe = notifier.subscribe(wake)
    // A commit between the waiter's own read and now woke nobody (or nobody watched): read now.
    if (subscribing || generation !== since) wake()
  }

  return {
    get generation() {
      return generation
    },
    get head() {
      return lastHead
    },
    counts: () => ({ ...counts }),
    hasRoom: () => counts['long-poll'] + alsoWaiting() < maxWaiting,
    wait(request) {
      return new Promise<WaitResult>((resolve) => waitFor(request, { woken: resolve }))
    },
    waitFor,
    read(shape, query, toWait = false) {
      if (toWait && headGeneration === generation && positionOf(query.after) >= positionOf(lastHead)) {
        return Promise.resolve({ page: { changes: [], cursor: query.after, hasMore: false }, since: generation })
      }
      const key = keyOf(shape, query.after)
      let read = reads.get(key)
      if (read === undefined) {
        const since = generation
        read = store.listChanges(query).then((page) => ({ page, since }))
        reads.set(key, read)
        const forget = () => reads.delete(key)
        read.then(forget, forget)
      }
      return read
    },
    readHead() {
      if (headRead === undefined) {
        const read = store.feedHead()
        headRead = read
        const forget = () => {
          if (headRead === read) headRead = undefined
        }
        read.then(forget, forget)
      }
      return headRead
    },
    close() {
      closed = true
      for (const waiter of [...waiters]) waiter.end(null, true, generation)
    },
  }
}
