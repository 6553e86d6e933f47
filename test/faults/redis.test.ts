/**
 * `serve --redis` while its Redis goes away (stopped, then hung), under every kind of request (pages,
 * gets, a merged get, facets, the feed, search, downloads): fail open by default, with no
 * RateLimit headers and one warning each way; `--redis-failure closed` answers 503 meanwhile.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminUrlOf, startServer } from '../support/cli.js'
import { startPrivateRedis, redisServerInstalled, type PrivateRedis } from '../support/redis-server.js'
import { duringOutage, expectEveryKindAnswers, expectMirrorEqualsList, expectOutageHandled, mergeInDemo, pathsOfEveryKind, sleep, type Outcome } from './harness.js'

const KEY = 'er-faults-redis-key'

const installed = redisServerInstalled()
describe.skipIf(!installed)(`serve --redis while Redis is away (${installed ? 'a private redis-server' : 'skipped: no redis-server'})`, () => {
  let redis: PrivateRedis
  beforeAll(async () => {
    redis = await startPrivateRedis()
  })
  afterAll(() => redis?.stop())

  /** The server under load and followed by a mirror while `fault` runs; then what the load saw and what it warned. */
  async function underLoad(args: string[], fault: () => Promise<{ awayAt: number; backAt: number }>) {
    const data = mkdtempSync(join(tmpdir(), 'er-faults-redis-'))
    const server = await startServer(['--data', data, '--demo', '--api-key', KEY, '--rate-limit', '100000', '--redis', redis.url, '--admin-port', '0', ...args])
    let printed = ''
    server.process.stdout!.on('data', (chunk: Buffer) => void (printed += chunk))
    server.process.stderr!.on('data', (chunk: string) => void (printed += chunk))
    try {
      await mergeInDemo(data)
      // Every request kind (search's index opened and caught up) answers before the load: what the
      // warnings below are about is the outage, not the start.
      const kinds = await pathsOfEveryKind(server.url, KEY, 'a000039')
      await expectEveryKindAnswers(server.url, KEY, kinds)
      printed = ''
      const { outcomes, awayAt, backAt, mirror } = await duringOutage(server.url, KEY, Object.values(kinds), fault)
      await expectMirrorEqualsList(server.url, KEY, mirror)
      // From the outage's start: on a loaded machine a command may time out before the load begins,
      // and that outage's end can come after `printed` was emptied.
      const lines = printed.split('\n')
      const outage = lines.slice(Math.max(0, lines.findIndex((line) => /outage started/.test(line))))
      const warnings = (pattern: RegExp) => outage.filter((line) => pattern.test(line))
      const metrics = await (await fetch(`${adminUrlOf(server)}/metrics`)).text()
      const counter = (pattern: RegExp) => Number(pattern.exec(metrics)?.[1] ?? 0)
      return {
        outcomes,
        awayAt,
        backAt,
        started: warnings(/outage started/),
        ended: warnings(/outage ended/),
        bypassed: counter(/^entity_registry_rate_limit_bypassed_total (\d+)$/m),
        refused: counter(/^entity_registry_dependency_errors_total\{dependency="rate_limit"\} (\d+)$/m),
      }
    } finally {
      await server.stop()
    }
  }

  /** Open: nothing fails, nothing answered while Redis was away carries RateLimit, every answer 2 s after its return does. */
  function expectFailedOpen({ outcomes, awayAt, backAt, started, ended, bypassed }: Awaited<ReturnType<typeof underLoad>>) {
    expectOutageHandled(outcomes, { code: null, awayAt, backAt })
    const during = outcomes.filter((outcome) => outcome.sentAt >= awayAt && outcome.answeredAt <= backAt)
    expect(during.length).toBeGreaterThan(0)
    // The metric counts the requests let through uncounted: every one answered while Redis was away.
    expect(bypassed).toBeGreaterThanOrEqual(during.length)
    expect(during.filter((outcome) => outcome.rateLimit !== null).map((outcome) => `${outcome.path} at +${outcome.sentAt - awayAt} ms`)).toEqual([])
    const counted = outcomes.find((outcome) => outcome.sentAt >= backAt && outcome.rateLimit !== null)
    console.log(`RateLimit headers back ${counted!.sentAt - backAt} ms after Redis`)
    const after = outcomes.filter((outcome) => outcome.sentAt >= backAt + 2000)
    expect(after.length).toBeGreaterThan(0)
    expect(after.filter((outcome) => outcome.rateLimit === null).map((outcome) => `${outcome.path} at +${outcome.sentAt - backAt} ms after`)).toEqual([])
    expect(started).toHaveLength(1)
    expect(ended).toHaveLength(1)
  }

  it('fails open while Redis is stopped and started again on its port', async () => {
    const seen = await underLoad([], async () => {
      await redis.stop()
      // Once stopped: no answer from then on may carry RateLimit headers.
      const awayAt = Date.now()
      await sleep(2000)
      await redis.start()
      return { awayAt, backAt: Date.now() }
    })
    expectFailedOpen(seen)
  })

  it('fails open while Redis hangs (SIGSTOP), without each request waiting for the timeout', async () => {
    const seen = await underLoad([], async () => {
      redis.pause()
      const awayAt = Date.now() + 50 // what was sent just before may still be answered
      await sleep(3000)
      const backAt = Date.now()
      redis.resume()
      return { awayAt, backAt }
    })
    expectFailedOpen(seen)
    const latency = (outcomes: Outcome[]) => outcomes.map((outcome) => outcome.answeredAt - outcome.sentAt).sort((a, b) => a - b)
    const paused = latency(seen.outcomes.filter((outcome) => outcome.sentAt >= seen.awayAt && outcome.answeredAt <= seen.backAt))
    const before = latency(seen.outcomes.filter((outcome) => outcome.answeredAt < seen.awayAt))
    const at = (sorted: number[], quantile: number) => sorted[Math.floor(sorted.length * quantile)]!
    console.log(`while paused: ${paused.length} requests, p50 ${at(paused, 0.5)} ms, p90 ${at(paused, 0.9)} ms, max ${paused.at(-1)} ms (before: p50 ${at(before, 0.5)} ms)`)
    expect(at(paused, 0.5)).toBeLessThan(50)
  })

  it('--redis-failure closed: 503 rate_limit_unavailable with Retry-After while Redis is away', async () => {
    const seen = await underLoad(['--redis-failure', 'closed'], async () => {
      // Before it stops: a request may find it stopping.
      const awayAt = Date.now()
      await redis.stop()
      await sleep(2000)
      await redis.start()
      return { awayAt, backAt: Date.now() }
    })
    expectOutageHandled(seen.outcomes, { code: 'rate_limit_unavailable', awayAt: seen.awayAt, backAt: seen.backAt })
    // The mirror's refused requests are counted too.
    expect(seen.refused).toBeGreaterThanOrEqual(seen.outcomes.filter((outcome) => outcome.code === 'rate_limit_unavailable').length)
    expect(seen.started).toHaveLength(1)
    expect(seen.ended).toHaveLength(1)
  })
})
