/**
 * `serve --search postgres` and `reindex --search postgres` as a user runs them (the built CLI): the
 * index inside the store's database, on the test server (pg_trgm, no pgvector) and on PGlite.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { searchDocumentSchema } from '../../src/contract/schemas.js'
import { httpConformanceCases } from '../../src/testing/index.js'
import { freshPostgresSchema, POSTGRES_URL, storeDialects } from '../stores/each-store.js'
import { CLI, startServer, type Server } from '../support/cli.js'
import { assertJsonApi, readDocument } from '../support/documents.js'
import { withPostgresClient } from '../support/postgres-client.js'
import { within } from '../support/polling.js'

const DEMO = fileURLToPath(new URL('../../demo/entities.jsonl', import.meta.url))
const postgres = storeDialects.find((dialect) => dialect.name === 'postgres')!

function run(args: string[]) {
  const result = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 120_000 })
  return { code: result.status, out: result.stdout, err: result.stderr }
}

/** The HTTP conformance kit's cases, search included, against the server `server` gives once started. */
function itConforms(server: () => Server) {
  for (const conformanceCase of httpConformanceCases) {
    it(`conforms: ${conformanceCase.name}`, () => conformanceCase.run({ baseUrl: server().url, apiKey: 'k', validateDocument: assertJsonApi }), 60_000)
  }
}

async function searchIds(server: Server, q: string): Promise<string[]> {
  const response = await fetch(`${server.url}/v1/search?q=${encodeURIComponent(q)}`, { headers: { Authorization: 'Bearer k' } })
  return (await readDocument(response, searchDocumentSchema)).data.map((entity) => entity.id)
}

describe.skipIf(postgres.skipReason !== null)(`search inside PostgreSQL, from the CLI (${POSTGRES_URL})`, () => {
  let schema: Awaited<ReturnType<typeof freshPostgresSchema>>
  let database: string
  const data = mkdtempSync(join(tmpdir(), 'er-pgsearch-'))
  const serve = () => startServer(['--data', data, '--database', database, '--search', 'postgres', '--embedder', 'none', '--api-key', 'k'])

  beforeAll(async () => {
    await withPostgresClient(POSTGRES_URL, (client) => client.query('create extension if not exists pg_trgm schema public')).catch(() => undefined)
    schema = await freshPostgresSchema()
    const url = new URL(schema.url)
    url.searchParams.set('options', `${url.searchParams.get('options')},public`)
    database = url.href
    expect(run(['import', DEMO, '--data', data, '--database', database]).code).toBe(0)
  })
  afterAll(async () => {
    await schema?.drop()
  })

  it('refuses to start without pgvector unless told to rank without vectors, naming the extension and how to add it', () => {
    const refused = run(['reindex', '--data', data, '--database', database, '--search', 'postgres'])
    expect(refused.code).not.toBe(0)
    expect(refused.err).toContain('needs the extension vector')
    expect(refused.err).toContain('CREATE EXTENSION vector')
    expect(refused.err).toContain('--embedder none')
  })

  it('reindexes into the database and serves names, typos and prefixes from it, with no index on disk', async () => {
    const reindexed = run(['reindex', '--data', data, '--database', database, '--search', 'postgres', '--embedder', 'none'])
    expect([reindexed.code, reindexed.err]).toEqual([0, ''])
    expect(reindexed.out.trim().split('\n').at(-1)).toBe('reindexed: 685 changes applied')
    const server = await serve()
    try {
      expect(server.lines).toContain('search ranks by full text and names alone (--embedder none): no vectors')
      expect((await searchIds(server, 'Klobu'))[0]).toBe('k000367')
      expect((await searchIds(server, 'Abraham Lincon'))[0]).toBe('l000313')
      expect((await searchIds(server, 'health care')).slice(0, 3)).toContain('hr3590111')
      expect(existsSync(join(data, 'search'))).toBe(false)
    } finally {
      await server.stop()
    }
  })

  describe('the HTTP conformance kit', () => {
    let server: Server | undefined
    beforeAll(async () => {
      server = await serve()
    }, 60_000)
    afterAll(async () => {
      await server?.stop()
    })
    itConforms(() => server!)
  })

  it('runs one writer and every reader: both answer at once, then from memory, both find what is imported and renamed, and the other takes over indexing when the writer dies', { timeout: 120_000 }, async () => {
    const indexes = (server: Server) => server.lines.some((line) => line.startsWith('search index: this instance indexes'))
    const first = await serve()
    const second = await serve()
    try {
      // The second searches the shared index as soon as it listens: nothing to build.
      const answeredAt = Date.now()
      expect((await searchIds(second, 'Klobu'))[0]).toBe('k000367')
      expect(Date.now() - answeredAt).toBeLessThan(1000)
      // One of them indexes, whichever took the lock first (the server of the tests above may still
      // have held it when the first started); the other only searches.
      await within(10_000, () => indexes(first) || indexes(second))
      const [writer, reader] = indexes(first) ? [first, second] : [second, first]
      await within(10_000, () => reader.lines.includes('search index: another instance indexes the shared index; this one searches it'))
      expect(indexes(reader)).toBe(false)

      const imported = (id: string, name: string) => {
        const file = join(mkdtempSync(join(tmpdir(), 'er-pgsearch-import-')), 'one.ndjson')
        writeFileSync(file, `${JSON.stringify({ id, type: 'person', name })}\n`)
        expect(run(['import', file, '--data', data, '--database', database]).code).toBe(0)
      }
      // Each keeps the index in memory too: the reader takes in what the writer writes to the shared one.
      for (const server of [first, second]) await within(10_000, () => server.lines.some((line) => /^search: \d+ entities loaded in memory/.test(line)))
      imported('zzquokka', 'Quokkabert Wombatson')
      for (const server of [first, second]) {
        await within(10_000, async () => (await searchIds(server, 'Quokabert'))[0] === 'zzquokka')
      }
      imported('zzquokka', 'Wallabina Wombatson')
      for (const server of [first, second]) {
        await within(10_000, async () => (await searchIds(server, 'Wallabina'))[0] === 'zzquokka' && !(await searchIds(server, 'Quokkabert')).includes('zzquokka'))
      }

      // Killed, its connection ends and the server lets the lock go; the other takes it at its next try.
      writer.process.kill('SIGKILL')
      const tookOver = await within(10_000, () => indexes(reader))
      expect(tookOver).toBeLessThan(10_000)
      imported('zznumbat', 'Numbatrix Example')
      await within(10_000, async () => (await searchIds(reader, 'Numbatrix'))[0] === 'zznumbat')
    } finally {
      await first.stop()
      await second.stop()
    }
  })
})

describe('search inside PGlite, from the CLI', () => {
  const data = mkdtempSync(join(tmpdir(), 'er-pglite-search-'))
  let server: Server | undefined
  beforeAll(async () => {
    // PGlite makes its database and imports the demo data first: 5 to 25 s on a shared machine.
    server = await startServer(['--data', data, '--database', `pglite:${join(data, 'db')}`, '--search', 'postgres', '--embedder', 'none', '--demo', '--api-key', 'k'])
  }, 120_000)
  afterAll(async () => {
    await server?.stop()
  })

  it('serves the demo data with the index in the PGlite database', async () => {
    expect((await searchIds(server!, 'Gillibrnd'))[0]).toBe('g000555')
    expect(existsSync(join(data, 'search'))).toBe(false)
  })

  itConforms(() => server!)
})
