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
}

export interface RateLimiter {
  take(key: string): Promise<RateLimitDecision>
}
