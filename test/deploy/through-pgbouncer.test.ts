/**
 * The CLI as a user on managed PostgreSQL runs it: `--database` pointed at a transaction pooler
 * (PgBouncer in `pool_mode = transaction`, 3 server connections, Debian's 1.18 with no prepared
 * statement support), and nothing else changed. import, reindex and keys through it; two `serve
 * --search postgres` instances answering every endpoint (the HTTP conformance kit, search included)
 * while two imports write at once, the feed tailed without a gap, one indexer, and the other taking
 * over within 10 s of its death (kill -9).
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { changesDocumentSchema, searchDocumentSchema } from '../../src/contract/schemas.js'
import { httpConformanceCases } from '../../src/testing/index.js'
import { POSTGRES_URL, storeDialects } from '../stores/each-store.js'
import { adminUrlOf, CLI, startServer, type Server } from '../support/cli.js'
import { assertJsonApi, readDocument } from '../support/documents.js'
import { pgbouncerSkipReason, startPgBouncer, type PgBouncer } from '../support/pgbouncer.js'
import { withPostgresClient } from '../support/postgres-client.js'
import { within } from '../support/polling.js'

const DEMO = fileURLToPath(new URL('../../demo/entities.jsonl', import.meta.url))
const skipReason = storeDialects.find((dialect) => dialect.name === 'postgres')!.skipReason ?? pgbouncerSkipReason
const KEY = 'through-pgbouncer-key'

function run(args: string[]) {
  const result = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 120_000 })
  return { code: result.status, out: result.stdout, err: result.stderr }
}

/** The CLI run as a child process of its own, without blocking this process (the servers' answers are read meanwhile). */
function runAsync(args: string[]): Promise<{ code: number | null; err: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'ignore', 'pipe'] })
  let err = ''
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()))
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, err })))
}

const get = (server: Server, path: string, key = KEY) => fetch(`${server.url}${path}`, { headers: { Authorization: `Bearer ${key}` } })

async function searchIds(server: Server, q: string): Promise<string[]> {
  return (await readDocument(await get(server, `/v1/search?q=${encodeURIComponent(q)}`), searchDocumentSchema)).data.map((entity) => entity.id)
}

/** A file of `count` people `<prefix>00000…`, for `import`. */
function peopleFile(prefix: string, count: number): string {
  const file = join(mkdtempSync(join(tmpdir(), 'er-pgbouncer-import-')), `${prefix}.ndjson`)
  writeFileSync(file, Array.from({ length: count }, (_, index) => `${JSON.stringify({ id: `${prefix}${String(index).padStart(5, '0')}`, type: 'person', name: `${prefix} Person ${index}` })}\n`).join(''))
  return file
}

describe.skipIf(skipReason !== null)(`through PgBouncer in transaction mode (${POSTGRES_URL})${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  let bouncer: PgBouncer
  let schema: Awaited<ReturnType<PgBouncer['freshSchema']>>
  let database: string
  const data = mkdtempSync(join(tmpdir(), 'er-pgbouncer-'))
  const servers: Server[] = []
  const serve = async () => {
    const server = await startServer(['--data', data, '--database', database, '--search', 'postgres', '--embedder', 'none', '--api-key', KEY, '--rate-limit', '0', '--log', 'warn', '--admin-port', '0'])
    servers.push(server)
    return server
  }

  beforeAll(async () => {
    await withPostgresClient(POSTGRES_URL, (client) => client.query('create extension if not exists pg_trgm schema public')).catch(() => undefined)
    bouncer = await startPgBouncer()
    schema = await bouncer.freshSchema()
    database = schema.url
    const imported = run(['import', DEMO, '--data', data, '--database', database])
    expect([imported.code, imported.err]).toEqual([0, ''])
  }, 120_000)
  afterAll(async () => {
    for (const server of servers) await server.stop()
    await schema?.drop()
    await bouncer?.stop()
  })

  it('reindexes search inside PostgreSQL through it (named statements once stopped it: "prepared statement already exists")', () => {
    const reindexed = run(['reindex', '--data', data, '--database', database, '--search', 'postgres', '--embedder', 'none'])
    expect([reindexed.code, reindexed.err]).toEqual([0, ''])
    expect(reindexed.out.trim().split('\n').at(-1)).toBe('reindexed: 685 changes applied')
  })

  describe('the HTTP conformance kit, search included', () => {
    let server: Server | undefined
    beforeAll(async () => {
      server = await serve()
    }, 60_000)
    for (const conformanceCase of httpConformanceCases) {
      it(`conforms: ${conformanceCase.name}`, () => conformanceCase.run({ baseUrl: server!.url, apiKey: KEY, validateDocument: assertJsonApi }), 60_000)
    }

    it('serves a key made by keys create, and refuses it within 5 s of keys revoke', async () => {
      const created = run(['keys', 'create', '--org', 'pooled', '--data', data, '--database', database])
      expect(created.code).toBe(0)
      const key = created.out.trim()
      expect((await get(server!, '/v1/entities/s1113', key)).status).toBe(200)
      expect(run(['keys', 'revoke', '--org', 'pooled', '--data', data, '--database', database]).code).toBe(0)
      await within(8000, async () => (await get(server!, '/v1/entities/s1113', key)).status === 401)
    })

    it("wakes a long-poll with an import of another process, reading the feed's head (LISTEN cannot work through it), and says so", async () => {
      const head = (await get(server!, '/v1/entities?page[limit]=1')).headers.get('change-feed-head')
      const waiting = get(server!, `/v1/entities/changes?filter=type:person&page[after]=${head}&waitSeconds=30`)
      // Imported once the request waits: found at once, it would not wait nor listen.
      await within(10_000, async () => /^entity_registry_change_feed_long_polls_waiting 1$/m.test(await (await fetch(`${adminUrlOf(server!)}/metrics`)).text()))
      const imported = await runAsync(['import', peopleFile('pgwake', 1), '--data', data, '--database', database])
      expect([imported.code, imported.err]).toEqual([0, ''])
      const answered = await readDocument(await waiting, changesDocumentSchema)
      expect(answered.data.map((change) => change.relationships.entity.data.id)).toEqual(['pgwake00000'])
      expect(server!.lines.some((line) => line.startsWith('change feed: a notification sent after LISTEN did not arrive'))).toBe(true)
    })
  })

  it('runs two instances and two imports at once: every change tailed once in order, one indexer, the other taking over within 10 s of its death', { timeout: 180_000 }, async () => {
    const indexes = (server: Server) => server.lines.some((line) => line.startsWith('search index: this instance indexes'))
    const [first, second] = [await serve(), await serve()]
    // One of the three servers (the kit's too) indexes; these two answer at once either way.
    await within(15_000, () => servers.some(indexes))

    const tail = async (server: Server, after: string | null) => {
      const document = await readDocument(await get(server, `/v1/entities/changes?filter=type:person&page[limit]=100${after === null ? '' : `&page[after]=${after}`}`), changesDocumentSchema)
      return { ids: document.data.map((change) => change.relationships.entity.data.id), cursor: document.meta.cursor ?? after }
    }
    // The feed's end before the imports: read up to it.
    let cursor: string | null = null
    for (let page = await tail(second, cursor); page.ids.length > 0; page = await tail(second, cursor)) cursor = page.cursor
    cursor = (await tail(second, cursor)).cursor

    const files = [peopleFile('pga', 150), peopleFile('pgb', 150)]
    let importing = true
    const imports = Promise.all(files.map((file) => runAsync(['import', file, '--batch', '10', '--data', data, '--database', database]))).finally(() => (importing = false))
    const tailed: string[] = []
    let pollsWithChanges = 0
    // Tailed from each instance in turn, as a client behind a load balancer would.
    for (let poll = 0; importing; poll++) {
      const page = await tail(poll % 2 === 0 ? first : second, cursor)
      tailed.push(...page.ids)
      cursor = page.cursor
      if (page.ids.length > 0 && importing) pollsWithChanges++
    }
    expect((await imports).map((result) => [result.code, result.err])).toEqual([
      [0, ''],
      [0, ''],
    ])
    for (let page = await tail(first, cursor); page.ids.length > 0; page = await tail(first, cursor)) {
      tailed.push(...page.ids)
      cursor = page.cursor
    }
    expect(pollsWithChanges).toBeGreaterThan(1)
    expect(tailed).toHaveLength(300)
    for (const prefix of ['pga', 'pgb']) {
      expect(tailed.filter((id) => id.startsWith(prefix))).toEqual(Array.from({ length: 150 }, (_, index) => `${prefix}${String(index).padStart(5, '0')}`))
    }

    // Both search what the one indexer writes.
    for (const server of [first, second]) await within(20_000, async () => (await searchIds(server, 'pgb Person 149'))[0] === 'pgb00149')
    const writers = servers.filter(indexes)
    expect(writers).toHaveLength(1)

    // Killed, its lease runs out; another instance takes it within 10 s and indexes what comes next.
    const [writer] = writers
    const others = servers.filter((server) => server !== writer)
    writer!.process.kill('SIGKILL')
    const tookOver = await within(12_000, () => others.some(indexes))
    expect(tookOver).toBeLessThan(10_000)
    expect(run(['import', peopleFile('pgc', 1), '--data', data, '--database', database]).code).toBe(0)
    for (const server of others) await within(20_000, async () => (await searchIds(server, 'pgc Person 0'))[0] === 'pgc00000')
  })
})
