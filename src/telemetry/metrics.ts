import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { ReplicaLag, SearchIndexLag } from './readiness.js'
import type { ConnectionPoolUse } from '../kysely/connection-pool-use.js'

/** Seconds: a get by id answers in well under a millisecond, a deep filtered page in tens. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

/** What a gauge read at scrape time reads: the feed head and the search index's lag. */
export interface MetricSources {
  /** The feed head's position (its sequence number), or null for an empty feed. */
  feedHead?: () => Promise<number | null>
  /** How far the search index is behind the feed, or null while it is not open. */
  searchLag?: () => Promise<SearchIndexLag | null>
  /** How far the replica the reads go to is behind its primary, when there is one. */
  replicaLag?: () => Promise<ReplicaLag>
  /** How the store's connection pool is used (a PostgreSQL store's). */
  storePool?: () => ConnectionPoolUse
}

/** The registry's instruments, on a prom-client registry of its own (served by `/metrics`). */
export interface Metrics {
  readonly register: Registry
  readonly requests: Counter<'route' | 'method' | 'status'>
  readonly requestDuration: Histogram<'route'>
  readonly requestsInFlight: Gauge
  readonly dependencyErrors: Counter<'dependency'>
  readonly storeQueryDuration: Histogram<'operation'>
  readonly rateLimited: Counter
  readonly rateLimitBypassed: Counter
  readonly importLines: Counter<'result'>
  /** Reads the gauges' values from these, at each scrape. */
  observe(sources: MetricSources): void
  /** Reads the change feed's waiting requests (`registry.waiting`), at each scrape. */
  observeWaiting(read: () => { longPolls: number; streams: number }): void
}

export interface MetricsOptions {
  /** Also the process's own metrics (CPU, memory, event loop lag, handles); default true. */
  processMetrics?: boolean
  /** Prepended to every name; default `entity_registry_`. */
  prefix?: string
}

export function createMetrics({ processMetrics = true, prefix = 'entity_registry_' }: MetricsOptions = {}): Metrics {
  const register = new Registry()
  if (processMetrics) collectDefaultMetrics({ register, prefix })
  const registers = [register]
  let sources: MetricSources = {}
  let waiting: (() => { longPolls: number; streams: number }) | undefined

  /** A gauge whose value is read when scraped; one whose source fails (the store away) keeps its last value. */
  const scraped = (name: string, help: string, read: () => Promise<number | null | undefined>) =>
    new Gauge({
      name: `${prefix}${name}`,
      help,
      registers,
      async collect() {
        const value = await read().catch(() => null)
        if (value !== null && value !== undefined) this.set(value)
      },
    })
  scraped('feed_head', 'The change feed head position (sequence number of the newest change)', async () => sources.feedHead?.())
  scraped('search_index_lag_changes', 'Changes of the feed the search index has not applied yet', async () => (await sources.searchLag?.())?.changes)
  scraped('change_feed_long_polls_waiting', 'Long-polls (waitSeconds) of the change feed waiting for a change', async () => waiting?.().longPolls)
  scraped('change_feed_streams_open', 'Event streams (text/event-stream) of the change feed open', async () => waiting?.().streams)
  const pool = async () => sources.storePool?.()
  scraped('store_pool_size', 'The most connections the store\'s pool holds to the database (--pool-size)', async () => (await pool())?.size)
  scraped('store_pool_busy_connections', 'Connections of the store\'s pool lent out now', async () => (await pool())?.busy)
  scraped('store_pool_idle_connections', 'Connections of the store\'s pool open and unused now', async () => (await pool())?.idle)
  scraped('store_pool_waiting', 'Statements waiting for a connection of the store\'s pool now', async () => (await pool())?.waiting)
  scraped('store_pool_waits_total', 'Statements that found every connection of the store\'s pool busy and waited for one', async () => (await pool())?.waits)
  scraped('store_pool_wait_timeouts_total', 'Waits for a connection of the store\'s pool that ran out (answered 503)', async () => (await pool())?.timeouts)
  scraped('search_index_lag_seconds', 'Age of the oldest change the search index has not applied yet (0 when current)', async () => (await sources.searchLag?.())?.seconds)
  scraped('replica_lag_seconds', 'How old the data of the replica the reads go to may be, in seconds (0 when it has replayed all the primary wrote)', async () => (await sources.replicaLag?.())?.seconds)
  scraped('replica_lag_bytes', 'Write-ahead log the replica the reads go to has not replayed yet, in bytes', async () => (await sources.replicaLag?.())?.bytes)

  return {
    register,
    requests: new Counter({ name: `${prefix}http_requests_total`, help: 'Requests answered, by route pattern, method and status', labelNames: ['route', 'method', 'status'], registers }),
    requestDuration: new Histogram({ name: `${prefix}http_request_duration_seconds`, help: 'Time from a request to its answer, by route pattern', labelNames: ['route'], buckets: LATENCY_BUCKETS, registers }),
    requestsInFlight: new Gauge({ name: `${prefix}http_requests_in_flight`, help: 'Requests being answered', registers }),
    dependencyErrors: new Counter({ name: `${prefix}dependency_errors_total`, help: 'Requests answered 503 because a dependency was away, by dependency', labelNames: ['dependency'], registers }),
    storeQueryDuration: new Histogram({ name: `${prefix}store_query_duration_seconds`, help: 'Time the store took for a read, by operation', labelNames: ['operation'], buckets: LATENCY_BUCKETS, registers }),
    rateLimited: new Counter({ name: `${prefix}rate_limited_requests_total`, help: 'Requests refused with 429 by the rate limit', registers }),
    rateLimitBypassed: new Counter({ name: `${prefix}rate_limit_bypassed_total`, help: 'Requests let through uncounted while the rate limiter was away (fail open)', registers }),
    importLines: new Counter({ name: `${prefix}import_lines_total`, help: 'Import lines by result: applied, unchanged, rejected', labelNames: ['result'], registers }),
    observe(given) {
      sources = given
    },
    observeWaiting(read) {
      waiting = read
    },
  }
}
