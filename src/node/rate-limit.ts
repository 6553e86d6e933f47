import { createTokenBucketRateLimiter } from '../rate-limit/token-bucket.js'
import type { RateLimiter } from '../ports/rate-limiter.js'

/** How long `serve` waits for Redis before it starts answering (failing open until Redis answers). */
const REDIS_CONNECT_WAIT_MS = 3000

/** The serve command's limiter: in the process, or in Redis when `redisUrl` is given, shared by every instance. */
export async function openRateLimiter(limit: number, redisUrl: string | undefined): Promise<{ rateLimit: RateLimiter; close(): Promise<void> }> {
  if (redisUrl === undefined) return { rateLimit: createTokenBucketRateLimiter({ limit }), close: async () => {} }
  // Loaded only here: ioredis is an optional peer dependency.
  const [{ Redis }, { createRedisRateLimiter }] = await Promise.all([import('ioredis'), import('../redis/index.js')])
  const redis = new Redis(redisUrl, { commandTimeout: 250, maxRetriesPerRequest: 1, enableOfflineQueue: false })
  redis.on('error', () => {}) // an unreachable Redis fails open per request; ioredis keeps reconnecting
  // Serving starts once connected (or after REDIS_CONNECT_WAIT_MS): a request that came while the
  // connection was still being made would fail open, and a key would get more than its limit.
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, REDIS_CONNECT_WAIT_MS)
    redis.once('ready', () => {
      clearTimeout(timer)
      resolve()
    })
  })
  return { rateLimit: createRedisRateLimiter({ redis, limit }), close: async () => void redis.disconnect() }
}
