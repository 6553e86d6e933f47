import type { RateLimitDecision, RateLimiter } from '../ports/rate-limiter.js'
import { setNewest } from '../bounded-map.js'

export interface TokenBucketOptions {
  /** Requests per window; also the burst size. */
  limit: number
  windowSeconds?: number
  /** Buckets idle this long are dropped; bounds memory under many keys. */
  maxKeys?: number
  now?: () => number
}

/** In-process token bucket per key: `limit` requests per window, refilled continuously. */
export function createTokenBucketRateLimiter(options: TokenBucketOptions): RateLimiter {
  const buckets = createTokenBuckets(options)
  return { take: (key) => buckets.take(key) }
}

/** Token buckets by key, least recently used dropped first beyond `maxKeys`. */
export function createTokenBuckets({ limit, windowSeconds = 60, maxKeys = 100_000, now = Date.now }: TokenBucketOptions) {
  if (!(Number.isInteger(limit) && limit > 0)) throw new RangeError('limit must be a positive whole number')
  const refillPerMs = limit / (windowSeconds * 1000)
  const buckets = new Map<string, { tokens: number; updated: number }>()

  const decision = (allowed: boolean, tokens: number): RateLimitDecision => ({
    allowed,
    limit,
    remaining: Math.floor(tokens),
    windowSeconds,
    resetSeconds: Math.ceil((limit - tokens) / refillPerMs / 1000),
    retryAfterSeconds: allowed ? 0 : Math.ceil((1 - tokens) / refillPerMs / 1000),
  })
  const refilled = (key: string, time: number) => {
    const bucket = buckets.get(key)
    return bucket === undefined ? limit : Math.min(limit, bucket.tokens + (time - bucket.updated) * refillPerMs)
  }

  return {
    /** Takes a token when there is one. */
    take(key: string): RateLimitDecision {
      const time = now()
      let tokens = refilled(key, time)
      const allowed = tokens >= 1
      if (allowed) tokens -= 1
      // Least recently used first out.
      setNewest(buckets, key, { tokens, updated: time }, maxKeys)
      return decision(allowed, tokens)
    },
    /** Whether a token could be taken now, taking none. */
    peek(key: string): RateLimitDecision {
      const tokens = refilled(key, now())
      return decision(tokens >= 1, tokens)
    },
  }
}
