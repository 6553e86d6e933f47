import type { Dependency } from '../ports/dependency.js'
import type { RequestRecord, Telemetry } from '../ports/telemetry.js'
import type { Logger } from './logger.js'
import type { Metrics } from './metrics.js'

/** A dependency away is logged at most this often (with how many requests it failed meanwhile), not once a request. */
const DEPENDENCY_LOG_INTERVAL_MS = 5000

export interface TelemetryOptions {
  metrics?: Metrics
  /** One line a request at `info`; dependencies away at `warn`. */
  logger?: Logger
}

/** The `Telemetry` port over prom-client metrics and a pino logger (either may be left out). */
export function createTelemetry({ metrics, logger }: TelemetryOptions): Telemetry {
  const lastLogged = new Map<Dependency, { at: number; suppressed: number }>()
  const accessLog = logger?.isLevelEnabled('info') ? logger : undefined
  const telemetry: Telemetry = {
    dependencyFailed(dependency, error) {
      metrics?.dependencyErrors.inc({ dependency })
      if (!logger) return
      const now = Date.now()
      const last = lastLogged.get(dependency)
      if (last && now - last.at < DEPENDENCY_LOG_INTERVAL_MS) {
        last.suppressed++
        return
      }
      lastLogged.set(dependency, { at: now, suppressed: 0 })
      logger.warn({ dependency, error: (error as Error).message, failedSinceLastLine: last?.suppressed ?? 0 }, `${dependency} unavailable`)
    },
    rateLimitBypassed() {
      metrics?.rateLimitBypassed.inc()
    },
  }
  // Left out when there is nothing to count or log: the registry then builds no record of a request.
  if (metrics) telemetry.requestStarted = () => metrics.requestsInFlight.inc()
  if (metrics || accessLog) {
    telemetry.requestFinished = (record: RequestRecord) => {
      if (metrics) {
        const route = record.route ?? 'unmatched'
        metrics.requestsInFlight.dec()
        metrics.requests.inc({ route, method: record.method, status: record.status })
        metrics.requestDuration.observe({ route }, record.durationMs / 1000)
        if (record.status === 429) metrics.rateLimited.inc()
      }
      accessLog?.info(
        {
          requestId: record.requestId,
          method: record.method,
          route: record.route,
          status: record.status,
          bytes: record.bytes,
          durationMs: Math.round(record.durationMs * 1000) / 1000,
          key: record.principal,
        },
        'request',
      )
    }
  }
  return telemetry
}
