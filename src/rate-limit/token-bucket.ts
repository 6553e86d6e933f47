import type { RateLimitDecision, RateLimiter } from '../ports/rate-limiter.js'

export interface TokenBucketOptions {
  /** Requests per window; also the burst size. */
  limit: number
  windowSeconds?: number
  /** Buckets idle this long are dropped; bounds memory under many keys. */
  maxKeys?: number
  now?: () => number
}

/** In-process token bucket per key: `limit` requests per window, refilled continuously. */
export function createTokenBucketRateLimiter({ limit, windowSeconds = 60, maxKeys = 100_000, now = Date.now }: TokenBucketOptions): RateLimiter {
  if (!(Number.isInteger(limit) && limit > 0)) throw new RangeError('limit must be a positive whole number')
  const refillPerMs = limit / (windowSeconds * 1000)
  const buckets = new Map<string, { tokens: number; updated: number }>()
  return {
    async take(key): Promise<RateLimitDecision> {
      const time = now()
      const bucket = buckets.get(key) ?? { tokens: limit, updated: time }
      bucket.tokens = Math.min(limit, bucket.tokens + (time - bucket.updated) * refillPerMs)
      bucket.updated = time
      const allowed = bucket.tokens >= 1
      if (allowed) bucket.tokens -= 1
      // Re-insert so the Map's order is least recently used first.
      buckets.delete(key)
      buckets.set(key, bucket)
      if (buckets.size > maxKeys) buckets.delete(buckets.keys().next().value!)
      return {
        allowed,
        limit,
        remaining: Math.floor(bucket.tokens),
        windowSeconds,
        resetSeconds: Math.ceil((limit - bucket.tokens) / refillPerMs / 1000),
        retryAfterSeconds: allowed ? 0 : Math.ceil((1 - bucket.tokens) / refillPerMs / 1000),
      }
    },
  }
}
