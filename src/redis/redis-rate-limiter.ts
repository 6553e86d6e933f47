import type { RateLimitDecision, RateLimiter } from '../ports/rate-limiter.js'

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
   * When Redis does not answer: `'open'` (default) lets the request through, since an outage of the
   * limiter should not take the API down with it; `'closed'` refuses it with a 429.
   */
  onUnavailable?: 'open' | 'closed'
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

/** Token bucket per key shared by every instance through one Redis. */
export function createRedisRateLimiter({ redis, limit, windowSeconds = 60, prefix = 'entity-registry:rate:', onUnavailable = 'open' }: RedisRateLimiterOptions): RateLimiter {
  if (!(Number.isInteger(limit) && limit > 0)) throw new RangeError('limit must be a positive whole number')
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
      let reply: unknown
      try {
        reply = await redis.eval(TAKE, 1, prefix + key, limit, windowSeconds * 1000)
      } catch {
        return onUnavailable === 'open' ? decide(true, limit - 1) : decide(false, 0)
      }
      const [allowed, tokens] = reply as [number, string]
      return decide(allowed === 1, Number(tokens))
    },
  }
}
