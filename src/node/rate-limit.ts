import { createTokenBucketRateLimiter } from '../rate-limit/token-bucket.js'
import type { RateLimiter } from '../ports/rate-limiter.js'

/** How long `serve` waits for Redis before it starts answering (failing open until Redis answers). */
const REDIS_CONNECT_WAIT_MS = 3000
/** Longest wait between reconnections to a Redis that went away (ioredis's default is 2 s). */
const REDIS_RECONNECT_MAX_MS = 500

export interface RedisRateLimitOptions {
  /** While Redis is away: let requests through uncounted (`open`, default) or refuse them with 503 (`closed`). */
  failure?: 'open' | 'closed'
  /** Told once when Redis stops answering and once when it answers again. */
  warn: (message: string) => void
}

/** The serve command's limiter: in the process, or in Redis when `redisUrl` is given, shared by every instance. */
export async function openRateLimiter(limit: number, redisUrl: string | undefined, { failure = 'open', warn }: RedisRateLimitOptions): Promise<{ rateLimit: RateLimiter; close(): Promise<void> }> {
  if (redisUrl === undefined) return { rateLimit: createTokenBucketRateLimiter({ limit }), close: async () => {} }
  // Loaded only here: ioredis is an optional peer dependency.
  const [{ Redis }, { createRedisRateLimiter }] = await Promise.all([import('ioredis'), import('../redis/index.js')])
  // Reconnecting often: requests are counted again only once the connection is back.
  const redis = new Redis(redisUrl, { commandTimeout: 250, maxRetriesPerRequest: 1, enableOfflineQueue: false, retryStrategy: (times) => Math.min(times * 50, REDIS_RECONNECT_MAX_MS) })
  redis.on('error', () => {}) // the limiter says when an outage starts and ends; ioredis keeps reconnecting
  // Serving starts once connected (or after REDIS_CONNECT_WAIT_MS): a request that came while the
  // connection was still being made would fail open, and a key would get more than its limit.
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, REDIS_CONNECT_WAIT_MS)
    redis.once('ready', () => {
      clearTimeout(timer)
      resolve()
    })
  })
  let awaySince = 0
  const onAvailabilityChange = (available: boolean, error?: unknown) => {
    if (available) {
      warn(`rate limit: Redis answers again, outage ended after ${((Date.now() - awaySince) / 1000).toFixed(1)} s`)
    } else {
      awaySince = Date.now()
      const meanwhile = failure === 'open' ? 'requests go through uncounted' : 'requests are refused with 503'
      warn(`rate limit: Redis does not answer (${(error as Error).message}), outage started: ${meanwhile} until it does`)
    }
  }
  return { rateLimit: createRedisRateLimiter({ redis, limit, onUnavailable: failure, onAvailabilityChange }), close: async () => void redis.disconnect() }
}
