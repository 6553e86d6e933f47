/** The Redis limiter while its Redis is away, against a client double whose `eval` answers when told. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { isDependencyUnavailable } from '../../src/ports/dependency.js'
import { createRedisRateLimiter, type RedisEvalClient } from '../../src/redis/index.js'

/** A client whose every `eval` waits until the test settles it: answered, failed, or timed out (as ioredis's `commandTimeout`). */
function faultyRedis() {
  const pending: { resolve(reply: unknown): void; reject(error: Error): void }[] = []
  const client: RedisEvalClient = {
    eval: () =>
      new Promise((resolve, reject) => {
        pending.push({ resolve, reject })
        setTimeout(() => reject(new Error('Command timed out')), 250)
      }),
  }
  return { client, pending, answer: (reply: unknown = [1, '9']) => pending.shift()!.resolve(reply) }
}

describe('Redis rate limiter while Redis is away', () => {
  beforeEach(() => void vi.useFakeTimers())
  afterEach(() => void vi.useRealTimers())

  it('fails open uncounted, skips Redis for breakerMs after a timeout, then probes it once', async () => {
    const redis = faultyRedis()
    const changes: boolean[] = []
    const limiter = createRedisRateLimiter({ redis: redis.client, limit: 10, breakerMs: 5000, onAvailabilityChange: (available) => void changes.push(available) })

    const first = limiter.take('k')
    await vi.advanceTimersByTimeAsync(250)
    expect(await first).toMatchObject({ allowed: true, counted: false })
    expect(changes).toEqual([false])

    // Open: answered at once, Redis not asked.
    for (let i = 0; i < 20; i++) expect(await limiter.take('k')).toMatchObject({ allowed: true, counted: false })
    expect(redis.pending).toHaveLength(1) // the timed-out call only

    // Half-open: one request probes, the others meanwhile skip Redis.
    redis.pending.length = 0
    await vi.advanceTimersByTimeAsync(5000)
    const probe = limiter.take('k')
    expect(redis.pending).toHaveLength(1)
    expect(await limiter.take('k')).toMatchObject({ counted: false })
    expect(redis.pending).toHaveLength(1)
    redis.answer()
    expect(await probe).toMatchObject({ allowed: true, remaining: 9 })
    expect(changes).toEqual([false, true])

    // Closed again: every request asks Redis.
    const next = limiter.take('k')
    redis.answer([1, '8'])
    expect(await next).toMatchObject({ remaining: 8 })
    expect((await next).counted).toBeUndefined()
    expect(changes).toEqual([false, true])
  })

  it('a failed probe keeps the outage going: no second warning, Redis skipped again', async () => {
    const redis = faultyRedis()
    const changes: boolean[] = []
    const limiter = createRedisRateLimiter({ redis: redis.client, limit: 10, breakerMs: 1000, onAvailabilityChange: (available) => void changes.push(available) })
    for (let round = 0; round < 3; round++) {
      const take = limiter.take('k')
      await vi.advanceTimersByTimeAsync(250)
      expect(await take).toMatchObject({ counted: false })
      await vi.advanceTimersByTimeAsync(1000)
    }
    expect(changes).toEqual([false])
  })

  it('a reply to a request sent before the failure does not end the outage', async () => {
    const redis = faultyRedis()
    const changes: boolean[] = []
    const limiter = createRedisRateLimiter({ redis: redis.client, limit: 10, onAvailabilityChange: (available) => void changes.push(available) })
    const early = limiter.take('k')
    const failing = limiter.take('k')
    redis.pending[1]!.reject(new Error('Connection is closed.'))
    expect(await failing).toMatchObject({ counted: false })
    redis.answer()
    expect(await early).toMatchObject({ remaining: 9 }) // counted: Redis did answer it
    expect(changes).toEqual([false])
    expect(await limiter.take('k')).toMatchObject({ counted: false })
  })

  it('closed: refuses with a 503 rate_limit_unavailable whose Retry-After is when Redis is probed next', async () => {
    const redis = faultyRedis()
    const limiter = createRedisRateLimiter({ redis: redis.client, limit: 10, onUnavailable: 'closed', breakerMs: 3000 })
    const first = limiter.take('k').catch((error: unknown) => error)
    redis.pending[0]!.reject(new Error('Connection is closed.'))
    const refused = await first
    expect(isDependencyUnavailable(refused)).toBe(true)
    expect(refused).toMatchObject({ dependency: 'rate_limit', retryAfterSeconds: 3 })
    await vi.advanceTimersByTimeAsync(1500)
    await expect(limiter.take('k')).rejects.toMatchObject({ dependency: 'rate_limit', retryAfterSeconds: 2 })
  })
})
