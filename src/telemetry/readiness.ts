import type { BlobStore } from '../ports/blob-store.js'
import type { EntityStore } from '../ports/entity-store.js'

/** One thing `/ready` needs: resolves when it is ready, rejects (or resolves with why not) when it is not. */
export interface ReadinessCheck {
  name: string
  check(): Promise<void | string>
}

export interface ReadinessReport {
  ready: boolean
  /** Each check's `ok`, or what is wrong; `shutting down` once draining. */
  checks: Record<string, string>
  /** How far the search index is behind the feed, once it is open: an index catching up after a load is still ready. */
  searchIndexLag?: SearchIndexLag
}

/** Changes of the feed the search index has not applied, and the age in seconds of the oldest of them. */
export interface SearchIndexLag {
  changes: number
  seconds: number
}

export interface ReadinessOptions {
  /** A check (and the lag) that takes longer fails (is left out); default 2,000 ms. */
  timeoutMs?: number
  /** The search index's lag, reported beside the checks; null while the index is not open. */
  searchLag?: () => Promise<SearchIndexLag | null>
}

export interface Readiness {
  check(): Promise<ReadinessReport>
  /** From now on not ready (a shutdown has begun): the load balancer stops sending requests. */
  drain(): void
}

/** A check that takes longer than this fails: a probe must answer, whatever a dependency does. */
const CHECK_TIMEOUT_MS = 2000

export function createReadiness(checks: ReadinessCheck[], { timeoutMs = CHECK_TIMEOUT_MS, searchLag }: ReadinessOptions = {}): Readiness {
  let draining = false
  /** What `ask` answers, or `late` once `timeoutMs` has passed. */
  const bounded = async <T>(ask: () => Promise<T>, late: T): Promise<T> => {
    let timer: ReturnType<typeof setTimeout> | undefined
    const timeout = new Promise<T>((resolve) => {
      timer = setTimeout(() => resolve(late), timeoutMs)
    })
    try {
      return await Promise.race([ask(), timeout])
    } finally {
      clearTimeout(timer)
    }
  }
  const run = ({ check }: ReadinessCheck): Promise<string> =>
    bounded(() => check().then((problem) => problem ?? 'ok', (error: unknown) => (error as Error).message || String(error)), `no answer within ${timeoutMs} ms`)
  // The lag is information, not a check: one that fails or is late is left out.
  const lag = () => (searchLag ? bounded(() => searchLag().catch(() => null), null) : Promise.resolve(null))
  return {
    async check() {
      if (draining) return { ready: false, checks: { server: 'shutting down' } }
      const [results, searchIndexLag] = await Promise.all([Promise.all(checks.map(run)), lag()])
      const report = Object.fromEntries(checks.map(({ name }, index) => [name, results[index]!]))
      return { ready: results.every((result) => result === 'ok'), checks: report, ...(searchIndexLag ? { searchIndexLag } : {}) }
    },
    drain() {
      draining = true
    },
  }
}

/** The store answers a read. */
export function storeCheck(store: EntityStore): ReadinessCheck {
  return { name: 'store', check: async () => void (await store.feedHead()) }
}

/** The blob store answers (a missing probe object is an answer). */
export function blobsCheck(blobs: BlobStore): ReadinessCheck {
  return { name: 'blobs', check: async () => void (await blobs.stat('readiness-probe')) }
}

/**
 * A new or rebuilt search index this many changes or fewer from the feed head counts as built:
 * `/ready` passes, and `serve` applies the rest before its first search. Search answers either way.
 */
export const SEARCH_BUILT_WITHIN = 1000

/**
 * The search index is open and built: no more than `maxLag` changes of building left (`buildLag`;
 * past it, search answers from an index that still misses much). `lag` is undefined while search is off.
 */
export function searchCheck(lag: () => Promise<number | undefined>, maxLag: number): ReadinessCheck {
  return {
    name: 'search',
    async check() {
      const behind = await lag()
      if (behind === undefined) return 'search is not open'
      return behind <= maxLag ? undefined : `the index is ${behind} changes behind the feed`
    },
  }
}
