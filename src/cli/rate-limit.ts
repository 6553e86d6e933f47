import { createTokenBucketRateLimiter } from '../rate-limit/token-bucket.js'
import type { RateLimiter } from '../ports/rate-limiter.js'

/** The serve command's limiter: in the process, or in Redis when `redisUrl` is given, shared by every instance. */
export async function openRateLimiter(limit: number, redisUrl: string | undefined): Promise<{ rateLimit: RateLimiter; close(): Promise<void> }> {
  if (redisUrl === undefined) return { rateLimit: createTokenBucketRateLimiter({ limit }), close: async () => {} }
  // Loaded only here: ioredis is an optional peer dependency.
  const [{ Redis }, { createRedisRateLimiter }] = await Promise.all([import('ioredis'), import('../redis/index.js')])
  const redis = new Redis(redisUrl, { commandTimeout: 250, maxRetriesPerRequest: 1, enableOfflineQueue: false })
  redis.on('error', () => {}) // an unreachable Redis fails open per request; ioredis keeps reconnecting
  return { rateLimit: createRedisRateLimiter({ redis, limit }), close: async () => void redis.disconnect() }
}
