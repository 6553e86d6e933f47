import type { Server } from 'node:http'
import type { Socket } from 'node:net'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

/** Connections open at once that make a crowd: what a burst of stalled downloads grows the heap with. */
const CROWD = 64
/** How long the server must have had no crowd before collecting; the second collection as long after. */
const QUIET_MS = 5000

export interface CollectAfterCrowdsOptions {
  /** Collects garbage in full; `exposedGarbageCollector()` by default. */
  collect?: () => void
  crowd?: number
  quietMs?: number
}

/**
 * Gives memory back once a crowd of connections has gone. V8 keeps the heap a burst grew it to (a
 * thousand stalled downloads: 13 to 60 MB) until its memory reducer runs, which may be a minute
 * later or not at all in a process that has gone quiet; two full collections, `quietMs` after the
 * last crowded moment and again `quietMs` after that, return it (the second frees what the first
 * finalized). Returns a function that stops watching.
 */
export function collectAfterCrowds(server: Server, options: CollectAfterCrowdsOptions = {}): () => void {
  const collect = options.collect ?? exposedGarbageCollector()
  if (collect === undefined) return () => {}
  const crowd = options.crowd ?? CROWD
  const quietMs = options.quietMs ?? QUIET_MS
  let open = 0
  let crowded = false
  let timer: ReturnType<typeof setTimeout> | undefined

  const collectAfterQuiet = (collections: number) => {
    timer = setTimeout(() => {
      collect()
      if (collections > 1) collectAfterQuiet(collections - 1)
    }, quietMs)
    timer.unref()
  }
  const onClose = () => {
    open--
    // Once the crowd has gone (a few connections may still be open), and not again until the next one.
    if (crowded && open < crowd / 8) {
      crowded = false
      collectAfterQuiet(2)
    }
  }
  const onConnection = (socket: Socket) => {
    open++
    if (open >= crowd) {
      crowded = true
      clearTimeout(timer)
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
 * V8's full collection, exposed at run time (how test runners reach it without `--expose-gc`);
 * undefined on a runtime that does not let the flag be set (Deno, Bun).
 */
export function exposedGarbageCollector(): (() => void) | undefined {
  try {
    setFlagsFromString('--expose-gc')
    const gc: unknown = runInNewContext('gc')
    return typeof gc === 'function' ? () => (gc as () => void)() : undefined
  } catch {
    return undefined
  }
}
