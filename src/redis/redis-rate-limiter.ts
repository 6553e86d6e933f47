import { DependencyUnavailableError } from '../ports/dependency.js'
import type { RateLimitDecision } from '../ports/rate-limiter.js'
import { createCircuitBreaker } from './circuit-breaker.js'

/** The part of an ioredis client this limiter uses. */
export interface RedisEvalClient {
  eval(script: string, numKeys: number, ...args: (string | number)[]): Promise<unknown>
}

export interface RedisRateLimiterOptions {
  /** An ioredis client (or anything with its `eval`); give it a short `commandTimeout`. */
  redis: RedisEvalClient
  /** Requests per window; also the burst size. */
  limit: number
  windowSeconds?: number
  /** Prefix of the bucket keys, so several registries can share one Redis. */
  prefix?: string
  /**
   * While Redis does not answer: `'open'` (default) lets requests through uncounted (with no
   * `RateLimit` headers), since an outage of the limiter should not take the API down with it;
   * `'closed'` refuses them with a 503 `rate_limit_unavailable` and `Retry-After`.
   */
  onUnavailable?: 'open' | 'closed'
  /**
   * After Redis failed (an error or the client's timeout), requests skip it for this long, answered
   * at once as while it is away, then one request probes it again. Default 1000.
   */
  breakerMs?: number
  /** Called once when Redis stops answering (with the error) and once when it answers again: for a warning. */
  onAvailabilityChange?: (available: boolean, error?: unknown) => void
}

// One token bucket per key, refilled continuously, on Redis's own clock so that every instance agrees.
// Atomic: Redis runs the whole script before any other command.
const TAKE = `
local limit = tonumber(ARGV[1])
local windowMs = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'updated')
local tokens = tonumber(state[1]) or limit
local updated = tonumber(state[2]) or now
tokens = math.min(limit, tokens + math.max(0, now - updated) * limit / windowMs)
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'updated', tostring(now))
redis.call('PEXPIRE', KEYS[1], windowMs)
return { allowed, tostring(tokens) }
`

/** Token bucket per key shared by every instance through one Redis: a `RateLimiter` whose decisions are promises. */
export function createRedisRateLimiter({
  redis,
  limit,
  windowSeconds = 60,
  prefix = 'entity-registry:rate:',
  onUnavailable = 'open',
  breakerMs = 1000,
  onAvailabilityChange,
}: RedisRateLimiterOptions): { take(key: string): Promise<RateLimitDecision> } {
  if (!(Number.isInteger(limit) && limit > 0)) throw new RangeError('limit must be a positive whole number')
  const breaker = createCircuitBreaker({ openMs: breakerMs, ...(onAvailabilityChange ? { onAvailabilityChange } : {}) })
  const refillPerSecond = limit / windowSeconds
  const decide = (allowed: boolean, tokens: number): RateLimitDecision => ({
    allowed,
    limit,
    remaining: Math.floor(tokens),
    windowSeconds,
    resetSeconds: Math.ceil((limit - tokens) / refillPerSecond),
    retryAfterSeconds: allowed ? 0 : Math.ceil((1 - tokens) / refillPerSecond),
  })
  return {
    async take(key) {
      const reply = await breaker.attempt(() => redis.eval(TAKE, 1, prefix + key, limit, windowSeconds * 1000))
      if (reply.ok) {
        const [allowed, tokens] = reply.value as [number, string]
        return decide(allowed === 1, Number(tokens))
      }
      if (onUnavailable === 'closed') {
        throw new DependencyUnavailableError('rate_limit', 'the rate limit cannot be checked: its Redis does not answer', Math.max(1, Math.ceil(reply.retryAfterMs / 1000)))
      }
      // What is left of the bucket is not known: `counted: false` keeps these numbers out of the headers.
      return { allowed: true, limit, remaining: limit, windowSeconds, resetSeconds: 0, retryAfterSeconds: 0, counted: false }
    },
  }
}
