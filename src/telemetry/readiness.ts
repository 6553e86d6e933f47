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
  /** How far the replica the reads go to is behind the primary, when there is one and it answered. */
  replicaLag?: ReplicaLag
}

/**
 * WAL bytes the replica has not replayed, and the age in seconds of the data it serves (null while
 * unknown: behind, and not seen caught up nor replaying a transaction since it started).
 */
export interface ReplicaLag {
  seconds: number | null
  bytes: number
}

/** Changes of the feed the search index has not applied, and the age in seconds of the oldest of them. */
export interface SearchIndexLag {
  changes: number
  seconds: number
}

export interface ReadinessOptions {
  /**
   * How long a probe waits for a check (and the lag) before it answers without it (default 2,000
   * ms): with the check's last answer if that is at most `lastAnswerMs` old, else as failed.
   */
  timeoutMs?: number
  /** How long a check's last answer stands in for one that is late (default 30,000 ms). */
  lastAnswerMs?: number
  /** The search index's lag, reported beside the checks; null while the index is not open. */
  searchLag?: () => Promise<SearchIndexLag | null>
  /** The replica's lag, reported beside the checks (`replicaCheck` fails on it). */
  replicaLag?: () => Promise<ReplicaLag>
}

export interface Readiness {
  check(): Promise<ReadinessReport>
  /** From now on not ready (a shutdown has begun): the load balancer stops sending requests. */
  drain(): void
}

/** A probe waits this long for a check; then the check's last answer, if recent, stands in. */
const CHECK_TIMEOUT_MS = 2000
/**
 * How long a check's last answer stands in for a late one. A busy machine (load 5 on two cores) made
 * a search check take over 2 s: a probe that fails whenever the machine is busy makes a load balancer
 * drop every busy instance at once. A dependency that is away fails its check (each has a timeout of
 * its own, shorter than this), and one that no longer answers at all fails once this has passed.
 */
const LAST_ANSWER_MS = 30_000

/**
 * A check run at most once at a time (a late run is shared by the probes that come meanwhile), with
 * its last answer. A run older than `abandonAfterMs` is given up: a check that hung is run anew.
 */
function runOneAtATime({ check }: ReadinessCheck, abandonAfterMs: number) {
  let running: { answer: Promise<string>; since: number } | undefined
  let last: { answer: string; at: number } | undefined
  return {
    run(): Promise<string> {
      if (running !== undefined && Date.now() - running.since <= abandonAfterMs) return running.answer
      const run = {
        since: Date.now(),
        answer: check()
          .then((problem) => problem ?? 'ok', (error: unknown) => (error as Error).message || String(error))
          .then((answer) => {
            // An abandoned run's answer is no one's.
            if (running === run) {
              last = { answer, at: Date.now() }
              running = undefined
            }
            return answer
          }),
      }
      running = run
      return run.answer
    },
    last: () => last,
  }
}

export function createReadiness(checks: ReadinessCheck[], { timeoutMs = CHECK_TIMEOUT_MS, lastAnswerMs = LAST_ANSWER_MS, searchLag, replicaLag }: ReadinessOptions = {}): Readiness {
  let draining = false
  /** What `ask` answers, or what `late` gives once `timeoutMs` has passed. */
  const bounded = async <T>(ask: () => Promise<T>, late: () => T): Promise<T> => {
    let timer: ReturnType<typeof setTimeout> | undefined
    const timeout = new Promise<T>((resolve) => {
      timer = setTimeout(() => resolve(late()), timeoutMs)
    })
    try {
      return await Promise.race([ask(), timeout])
    } finally {
      clearTimeout(timer)
    }
  }
  const runs = checks.map((check) => runOneAtATime(check, lastAnswerMs))
  const run = ({ run, last }: ReturnType<typeof runOneAtATime>): Promise<string> =>
    bounded(run, () => {
      const answered = last()
      return answered !== undefined && Date.now() - answered.at <= lastAnswerMs ? answered.answer : `no answer within ${timeoutMs} ms`
    })
  // A lag is information, not a check: one that fails or is late is left out.
  const lag = <T>(read: (() => Promise<T>) | undefined) => (read ? bounded(() => read().catch(() => null), () => null) : Promise.resolve(null))
  return {
    async check() {
      if (draining) return { ready: false, checks: { server: 'shutting down' } }
      const [results, searchIndexLag, replicaLagNow] = await Promise.all([Promise.all(runs.map(run)), lag(searchLag), lag(replicaLag)])
      const report = Object.fromEntries(checks.map(({ name }, index) => [name, results[index]!]))
      return {
        ready: results.every((result) => result === 'ok'),
        checks: report,
        ...(searchIndexLag ? { searchIndexLag } : {}),
        ...(replicaLagNow ? { replicaLag: replicaLagNow } : {}),
      }
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

/**
 * The replica the reads go to answers, at most `maxSeconds` behind its primary: past it, a load
 * balancer moves the requests to instances over a replica that keeps up (or over the primary).
 */
export function replicaCheck(lag: () => Promise<ReplicaLag>, maxSeconds: number): ReadinessCheck {
  return {
    name: 'replica',
    async check() {
      const { seconds, bytes } = await lag()
      if (seconds === null) return `the replica is ${bytes} bytes behind the primary, since an unknown time`
      return seconds <= maxSeconds ? undefined : `the replica is ${seconds} s behind the primary (more than ${maxSeconds} s)`
    },
  }
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
