/**
 * `serve --pool-size`: each instance's budget of connections to PostgreSQL. Many concurrent requests
 * share the pool's few connections (the server never sees more), and a pool that stays full answers
 * 503 with `Retry-After` after a bounded wait rather than queueing without end; `/metrics` shows it.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freshPostgresSchema, storeDialects } from '../stores/each-store.js'
import { adminUrlOf, startServer, type Server } from '../support/cli.js'

const postgres = storeDialects.find((dialect) => dialect.name === 'postgres')!
const KEY = 'pool-size-key-0123456789'
const POOL_SIZE = 2
const CONCURRENT = 50

describe.skipIf(postgres.skipReason !== null)(`serve --pool-size ${POOL_SIZE}${postgres.skipReason ? ` (skipped: ${postgres.skipReason})` : ''}`, () => {
  let schema: Awaited<ReturnType<typeof freshPostgresSchema>>
  let server: Server
  let admin: pg.Client
  const application = `er_pool_size_${process.pid}`

  beforeAll(async () => {
    schema = await freshPostgresSchema()
    const database = new URL(schema.url)
    // Its connections told apart on the server by their application name.
    database.searchParams.set('application_name', application)
    const data = mkdtempSync(join(tmpdir(), 'er-pool-size-'))
    server = await startServer(['--data', data, '--database', database.href, '--pool-size', String(POOL_SIZE), '--demo', '--search', 'none', '--api-key', KEY, '--rate-limit', '0', '--log', 'warn', '--admin-port', '0'])
    admin = new pg.Client({ connectionString: schema.url })
    await admin.connect()
  }, 60_000)
  afterAll(async () => {
    await server?.stop()
    await admin?.end()
    await schema?.drop()
  })

  const get = (path: string) => fetch(`${server.url}${path}`, { headers: { Authorization: `Bearer ${KEY}` } })
  const metric = async (name: string) => Number(new RegExp(`^entity_registry_${name} (\\S+)$`, 'm').exec(await (await fetch(`${adminUrlOf(server)}/metrics`)).text())?.[1])
  const paths = ['/v1/entities?page[limit]=20', '/v1/entities/s1113', '/v1/entities?filter=type:person', '/v1/facets?fields=type', '/v1/entities/changes?filter=type:person&page[limit]=20']

  it(`answers ${CONCURRENT} concurrent requests over at most ${POOL_SIZE} connections, waits counted in /metrics`, async () => {
    let most = 0
    let loading = true
    const sampling = (async () => {
      while (loading) {
        const { rows } = await admin.query<{ count: string }>('select count(*) from pg_stat_activity where application_name = $1', [application])
        most = Math.max(most, Number(rows[0]!.count))
      }
    })()
    const statuses = await Promise.all(Array.from({ length: CONCURRENT }, async (_, n) => (await get(paths[n % paths.length]!)).status))
    loading = false
    await sampling
    expect(statuses).toEqual(Array.from({ length: CONCURRENT }, () => 200))
    expect(most).toBeGreaterThan(0)
    expect(most).toBeLessThanOrEqual(POOL_SIZE)
    expect(await metric('store_pool_size')).toBe(POOL_SIZE)
    expect(await metric('store_pool_waits_total')).toBeGreaterThan(0)
    expect(await metric('store_pool_wait_timeouts_total')).toBe(0)
  })

  it('answers 503 with Retry-After after a bounded wait while every connection stays busy, and serves again once they are free', async () => {
    // Every read of the entities blocks behind this lock: the pool's connections stay busy.
    await admin.query('begin')
    await admin.query('lock table entities in access exclusive mode')
    const started = Date.now()
    let answers: { status: number; retryAfter: string | null; detail: string }[]
    try {
      answers = await Promise.all(
        Array.from({ length: CONCURRENT }, async (_, n) => {
          // Pages of as many sizes as requests: no two share a statement (gets asked together would: batched-gets.ts).
          const response = await get(`/v1/entities?page[limit]=${n + 1}`)
          const body = (await response.json()) as { errors?: { code: string; detail: string }[] }
          return { status: response.status, retryAfter: response.headers.get('retry-after'), detail: `${body.errors?.[0]?.code}: ${body.errors?.[0]?.detail}` }
        }),
      )
    } finally {
      await admin.query('rollback')
    }
    // Bounded: 2 s of waiting for a connection (3 s of reading for the two holding one), not forever.
    expect(Date.now() - started).toBeLessThan(30_000)
    expect(answers.every((answer) => answer.status === 503 && answer.retryAfter === '1')).toBe(true)
    const busy = answers.filter((answer) => answer.detail === `store_unavailable: all ${POOL_SIZE} connections of the pool to the database stayed busy`)
    expect(busy.length).toBeGreaterThanOrEqual(CONCURRENT - POOL_SIZE * 2)
    expect(await metric('store_pool_wait_timeouts_total')).toBeGreaterThanOrEqual(busy.length)
    expect((await get('/v1/entities/s1113')).status).toBe(200)
  })
})
