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
}

export interface Readiness {
  check(): Promise<ReadinessReport>
  /** From now on not ready (a shutdown has begun): the load balancer stops sending requests. */
  drain(): void
}

/** A check that takes longer than this fails: a probe must answer, whatever a dependency does. */
const CHECK_TIMEOUT_MS = 2000

export function createReadiness(checks: ReadinessCheck[], { timeoutMs = CHECK_TIMEOUT_MS } = {}): Readiness {
  let draining = false
  const run = async ({ check }: ReadinessCheck): Promise<string> => {
    let timer: ReturnType<typeof setTimeout> | undefined
    const timeout = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`no answer within ${timeoutMs} ms`), timeoutMs)
    })
    try {
      return await Promise.race([check().then((problem) => problem ?? 'ok', (error: unknown) => (error as Error).message || String(error)), timeout])
    } finally {
      clearTimeout(timer)
    }
  }
  return {
    async check() {
      if (draining) return { ready: false, checks: { server: 'shutting down' } }
      const results = await Promise.all(checks.map(run))
      const report = Object.fromEntries(checks.map(({ name }, index) => [name, results[index]!]))
      return { ready: results.every((result) => result === 'ok'), checks: report }
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
