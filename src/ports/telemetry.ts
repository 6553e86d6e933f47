import type { Dependency } from './dependency.js'

/** One request as it was answered: what an access log line and the request metrics are made of. */
export interface RequestRecord {
  /** The request's `X-Request-Id` (the client's when valid, else one made for it); echoed in the response. */
  requestId: string
  method: string
  /** The route pattern that answered (`/v1/entities/:id`), or null when none matched. */
  route: string | null
  status: number
  /** The body's length in bytes where known before it is sent (a stream's from its Content-Length). */
  bytes: number | null
  /** From the request to its answer being ready (a streamed body goes on after it). */
  durationMs: number
  /** The authenticated principal's public id (`er_7cQ2mPx9`, `configured-1`; never the key), or null. */
  principal: string | null
}

/**
 * What the core tells about its work: counters, logs and gauges live behind it (`entity-registry/node`'s
 * `createTelemetry` is prom-client and pino), so the core depends on neither. Every method is optional
 * and must not throw.
 */
export interface Telemetry {
  /** A request came in (requests in flight: started minus finished). */
  requestStarted?(): void
  requestFinished?(record: RequestRecord): void
  /** A dependency was away for a request; it was answered 503. */
  dependencyFailed?(dependency: Dependency, error: unknown): void
  /** The rate limiter could not decide (its Redis away) and let a request through uncounted. */
  rateLimitBypassed?(): void
}
