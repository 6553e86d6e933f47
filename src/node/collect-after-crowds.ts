import type { Server } from 'node:http'
import type { Socket } from 'node:net'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

/** Connections open at once that make a crowd: what a burst of stalled downloads grows the heap with. */
const CROWD = 64
/** How long the server must have had no crowd before collecting; the second collection as long after. */
const QUIET_MS = 5000
/** Young collections' spacing: more than the 5 s over which V8 measures the allocation rate that lets it shrink the young generation. */
const YOUNG_APART_MS = 6000

export interface CollectAfterCrowdsOptions {
  /** Collects garbage in full; `exposedGarbageCollector()` by default. */
  collect?: () => void
  /** Collects the young generation alone; `exposedGarbageCollector('young')` by default. */
  collectYoung?: () => void
  crowd?: number
  quietMs?: number
  /** How far apart the young collections are: 6 s unless given (V8 looks back 5 s). */
  youngApartMs?: number
}

/**
 * Gives memory back after a crowd of connections, once it has gathered and once it has gone.
 *
 * - Gathered (`crowd` open or more, and none opened for `quietMs`): a burst of connections grows
 *   V8's young generation to its largest (32 MB on Node 20, some 24 MB of it resident), and V8 keeps
 *   it so while the crowd waits quietly (ten thousand long-polls or event streams): nothing
 *   allocates, so nothing collects. Two young collections `youngApartMs` apart give it back (V8
 *   shrinks it at a collection that finds allocation slow over the last 5 s, which the first
 *   begins), at a millisecond or a few each, where a full collection of such a heap would pause the
 *   process 100 ms or more.
 * - Gone (fewer than an eighth of `crowd` still open): V8 keeps the heap the crowd grew (a thousand
 *   stalled downloads: 13 to 60 MB) until its memory reducer runs, which may be a minute later or
 *   not at all in a process that has gone quiet; two full collections, `quietMs` after the last
 *   crowded moment and again `quietMs` after that, return it (the second frees what the first
 *   finalized).
 *
 * Returns a function that stops watching.
 */
export function collectAfterCrowds(server: Server, options: CollectAfterCrowdsOptions = {}): () => void {
  const collect = options.collect ?? exposedGarbageCollector()
  const collectYoung = options.collectYoung ?? exposedGarbageCollector('young')
  if (collect === undefined || collectYoung === undefined) return () => {}
  const crowd = options.crowd ?? CROWD
  const quietMs = options.quietMs ?? QUIET_MS
  const youngApartMs = options.youngApartMs ?? YOUNG_APART_MS
  let open = 0
  let crowded = false
  /** When the last connection came while crowded: young collections wait for `quietMs` past it. */
  let lastArrival = 0
  let timer: ReturnType<typeof setTimeout> | undefined

  /** `collectNow`, `times` over, `apartMs` apart, none sooner than `quietMs` after the last arrival. */
  const collectWhenQuiet = (collectNow: () => void, times: number, apartMs: number) => {
    const next = (ms: number) => {
      timer = setTimeout(tick, ms)
      timer.unref()
    }
    const tick = () => {
      const sinceArrival = performance.now() - lastArrival
      if (sinceArrival < quietMs) return next(quietMs - sinceArrival)
      collectNow()
      if (--times > 0) next(apartMs)
      else timer = undefined
    }
    clearTimeout(timer)
    next(quietMs)
  }
  const onClose = () => {
    open--
    // Once the crowd has gone (a few connections may still be open), and not again until the next one.
    if (crowded && open < crowd / 8) {
      crowded = false
      collectWhenQuiet(collect, 2, quietMs)
    }
  }
  const onConnection = (socket: Socket) => {
    open++
    if (open >= crowd) {
      lastArrival = performance.now()
      // Armed as the crowd gathers (in place of a gone crowd's collections), and again by an
      // arrival after its young collections: an arrival while they wait only moves the quiet's start.
      if (!crowded || timer === undefined) collectWhenQuiet(collectYoung, 2, youngApartMs)
      crowded = true
    }
    // One listener for all (a socket closes once): no closure and `once` wrapper a connection.
    socket.on('close', onClose)
  }
  server.on('connection', onConnection)
  return () => {
    clearTimeout(timer)
    server.off('connection', onConnection)
  }
}

/**
 * V8's collector, exposed at run time (how test runners reach it without `--expose-gc`): a full
 * collection, or of the young generation alone; undefined on a runtime that does not let the flag
 * be set (Deno, Bun).
 */
export function exposedGarbageCollector(generation: 'full' | 'young' = 'full'): (() => void) | undefined {
  try {
    setFlagsFromString('--expose-gc')
    const gc: unknown = runInNewContext('gc')
    if (typeof gc !== 'function') return undefined
    const collectGc = gc as (options?: { type: 'major' | 'minor' }) => void
    return generation === 'young' ? () => collectGc({ type: 'minor' }) : () => collectGc()
  } catch {
    return undefined
  }
}
