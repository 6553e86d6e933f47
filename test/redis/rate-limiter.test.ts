import { Redis } from 'ioredis'
import { randomUUID } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { createRedisRateLimiter } from '../../src/redis/index.js'
import { REDIS_URL as url, redisReachable } from '../support/redis.js'

const reachable = await redisReachable()
const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, commandTimeout: 500, retryStrategy: () => null })
if (reachable) await probe.connect()
afterAll(() => probe.disconnect())

describe.skipIf(!reachable)(`Redis rate limiter (${reachable ? url : `skipped: no Redis at ${url}`})`, () => {
  const prefix = () => `er-test:${randomUUID()}:`

  it('shares one bucket per key between instances: the limit holds summed over both', async () => {
    const shared = prefix()
    const a = createRedisRateLimiter({ redis: probe, limit: 5, prefix: shared })
    const b = createRedisRateLimiter({ redis: probe, limit: 5, prefix: shared })
    const decisions = []
    for (let i = 0; i < 6; i++) decisions.push(await (i % 2 ? b : a).take('key1'))
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false])
    expect(decisions[4]).toMatchObject({ remaining: 0, limit: 5, windowSeconds: 60 })
    expect(decisions[5]!.retryAfterSeconds).toBe(12)
    expect((await a.take('key2')).allowed).toBe(true)
  })

  it('refills continuously', async () => {
    const limiter = createRedisRateLimiter({ redis: probe, limit: 2, windowSeconds: 1, prefix: prefix() })
    await limiter.take('k')
    await limiter.take('k')
    expect((await limiter.take('k')).allowed).toBe(false)
    await new Promise((r) => setTimeout(r, 600))
    expect((await limiter.take('k')).allowed).toBe(true)
  })

  it('fails open (uncounted) by default and closed (503) when asked when Redis does not answer', async () => {
    const dead = new Redis('redis://127.0.0.1:1', { lazyConnect: true, maxRetriesPerRequest: 0, commandTimeout: 200, retryStrategy: () => null, enableOfflineQueue: false })
    expect(await createRedisRateLimiter({ redis: dead, limit: 3 }).take('k')).toMatchObject({ allowed: true, counted: false })
    await expect(createRedisRateLimiter({ redis: dead, limit: 3, onUnavailable: 'closed' }).take('k')).rejects.toMatchObject({ name: 'DependencyUnavailableError', dependency: 'rate_limit' })
    dead.disconnect()
  })

  it('skips Redis while its connection is down, then counts again after one probe', async () => {
    const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, commandTimeout: 500, enableOfflineQueue: false })
    await redis.connect()
    const changes: boolean[] = []
    const limiter = createRedisRateLimiter({ redis, limit: 5, prefix: prefix(), breakerMs: 500, onAvailabilityChange: (available) => void changes.push(available) })
    expect(await limiter.take('k')).toMatchObject({ remaining: 4 })
    const ended = new Promise((resolve) => redis.once('end', resolve))
    redis.disconnect()
    await ended
    for (let i = 0; i < 5; i++) expect(await limiter.take('k')).toMatchObject({ allowed: true, counted: false })
    await redis.connect()
    expect(await limiter.take('k')).toMatchObject({ counted: false }) // still within breakerMs: Redis not asked
    await new Promise((resolve) => setTimeout(resolve, 550))
    expect(await limiter.take('k')).toMatchObject({ remaining: 3 }) // the requests let through were not counted
    expect(changes).toEqual([false, true])
    redis.disconnect()
  })
})
