/** The Redis the Redis suites use (ER_TEST_REDIS_URL, default the machine's own), and whether it answers. */
import { Redis } from 'ioredis'

export const REDIS_URL = process.env.ER_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

/** Whether Redis answers; with ER_REQUIRE_REDIS=1 an unreachable Redis fails the suite instead of skipping it. */
export async function redisReachable(): Promise<boolean> {
  const probe = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, commandTimeout: 500, retryStrategy: () => null })
  const reachable = await probe.connect().then(() => true, () => false)
  probe.disconnect()
  if (!reachable && process.env.ER_REQUIRE_REDIS) throw new Error(`Redis required but unreachable at ${REDIS_URL}`)
  return reachable
}
