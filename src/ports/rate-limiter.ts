export interface RateLimitDecision {
  allowed: boolean
  /** Requests allowed per window. */
  limit: number
  remaining: number
  windowSeconds: number
  /** Seconds until the quota is fully restored. */
  resetSeconds: number
  /** When not allowed: seconds until the next request may succeed. */
  retryAfterSeconds: number
  /**
   * False when the limiter could not reach its state (Redis away) and let the request through
   * without counting it: no `RateLimit` headers are sent, since `remaining` is not known.
   */
  counted?: boolean
}

export interface RateLimiter {
  /**
   * The decision, or a promise of it: a limiter that decides in the process gives it at once (a
   * request then awaits nothing for it). Throws (or rejects with) `DependencyUnavailableError('rate_limit', …)`
   * to refuse requests while its state is away (a 503).
   */
  take(key: string): RateLimitDecision | Promise<RateLimitDecision>
}
