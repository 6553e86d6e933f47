import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { changesDocumentSchema, entityCollectionDocumentSchema, entityDocumentSchema } from '../../src/contract/schemas.js'
import { createSqliteStore } from '../../src/kysely/index.js'
import { freshPostgresSchema, storeDialects } from '../stores/each-store.js'
import { CLI, startServer, type Server } from '../support/cli.js'
import { expectError, readDocument } from '../support/documents.js'
import { writeTinyModel } from '../support/tiny-model.js'

const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
const postgres = storeDialects.find((dialect) => dialect.name === 'postgres')!

/**
 * Runs the CLI to its end. Not `spawnSync`: a test's event loop blocked for seconds (an import under
 * load) missed the server closing an idle keep-alive connection, and the next get went out on it.
 */
function run(args: string[], env: Record<string, string> = {}, cwd?: string): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, cwd })
  let out = ''
  let err = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => void (out += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => void (err += chunk))
  return new Promise((resolve, reject) => {
    child.once('error', reject)
    child.once('close', (code) => resolve({ code, out, err }))
  })
}

describe('entity-registry CLI', () => {
  const data = mkdtempSync(join(tmpdir(), 'er-cli-'))
  let server: Server
  let key = ''
  const get = (path: string, token = key) => fetch(`${server.url}${path}`, { headers: { Authorization: `Bearer ${token}` } })

  beforeAll(async () => {
    if (!existsSync(CLI)) throw new Error('dist/cli/main.js is missing: run `npm run build` (npm test does)')
    server = await startServer(['--demo', '--data', data])
    key = /created an API key \(shown once, kept only hashed\): (er_\S+)$/.exec(server.lines.find((l) => l.startsWith('created')) ?? '')?.[1] ?? ''
  })
  afterAll(() => {
    server?.process.kill('SIGTERM')
  })

  it('serves the demo data with the key it created and printed once', async () => {
    expect(server.lines).toContain('imported the demo data: 685 entities')
    // The index opens empty and says so; then what it indexed from the feed before the first search.
    for (let waited = 0; waited < 20_000 && !server.lines.some((line) => line.startsWith('search index: ')); waited += 100) await new Promise((resolve) => setTimeout(resolve, 100))
    expect(server.lines).toContain('search index: 685 changes of the feed indexed')
    expect(key).toMatch(/^er_[0-9A-Za-z]{36}$/)
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    const document = await readDocument(await get('/v1/entities?filter=type:legislation'), entityCollectionDocumentSchema)
    expect(document.data).toHaveLength(19)
    await expectError(await get('/v1/entities', 'wrong'), 401, 'unauthorized')
  })

  it('serves the explorer at /explore with its security headers, and none with --no-explorer', async () => {
    const page = await fetch(`${server.url}/explore`)
    expect(page.status).toBe(200)
    expect(page.headers.get('Content-Type')).toBe('text/html; charset=utf-8')
    expect(page.headers.get('Content-Security-Policy')).toContain("script-src 'self'; style-src 'self'; connect-src 'self'")
    expect(page.headers.get('X-Content-Type-Options')).toBe('nosniff')
    expect(page.headers.get('Referrer-Policy')).toBe('no-referrer')
    const script = /<script type="module" src="([^"]+)">/.exec(await page.text())![1]!
    const bundle = await fetch(`${server.url}${script}`)
    expect([bundle.status, bundle.headers.get('Content-Type')]).toEqual([200, 'text/javascript; charset=utf-8'])
    const without = await startServer(['--no-explorer', '--search', 'none', '--api-key', 'k', '--data', mkdtempSync(join(tmpdir(), 'er-cli-'))])
    try {
      await expectError(await fetch(`${without.url}/explore`), 401, 'unauthorized')
    } finally {
      without.process.kill('SIGTERM')
    }
  })

  it('shows a person moved out of US-WA to a filterScope=either feed of US-WA, with matchesFilter false', async () => {
    const wa = await readDocument(await get('/v1/entities?filter=type:person%20jurisdiction:US-WA&page[limit]=1'), entityCollectionDocumentSchema)
    const person = wa.data[0]!
    const head = (await get('/v1/entities?page[limit]=1')).headers.get('change-feed-head')
    const file = join(mkdtempSync(join(tmpdir(), 'er-move-')), 'move.ndjson')
    writeFileSync(file, JSON.stringify({ id: person.id, type: 'person', ...person.attributes, jurisdiction: 'US-OR' }))
    const imported = await run(['import', file, '--data', data])
    expect(imported.code, imported.err).toBe(0)
    const feed = await readDocument(
      await get(`/v1/entities/changes?filter=jurisdiction:US-WA&filterScope=either&page[after]=${head}`),
      changesDocumentSchema,
    )
    expect(feed.data.map((change) => [change.relationships.entity.data.id, change.attributes.changeType, change.attributes.jurisdiction, change.meta])).toEqual([
      [person.id, 'update', 'US-OR', { matchesFilter: false }],
    ])
    const plain = await readDocument(await get(`/v1/entities/changes?filter=jurisdiction:US-WA&page[after]=${head}`), changesDocumentSchema)
    expect(plain.data).toEqual([])
  })

  it('searches with another embedder after reindex --embedder, and serves no search from an index another built', async () => {
    const own = mkdtempSync(join(tmpdir(), 'er-cli-embedder-'))
    const model = `transformers:${writeTinyModel()}`
    expect((await run(['import', fileURLToPath(new URL('../../demo/entities.jsonl', import.meta.url)), '--data', own])).code).toBe(0)
    const reindexed = await run(['reindex', '--data', own, '--embedder', model])
    expect(reindexed.code, reindexed.err).toBe(0)
    expect(reindexed.out).toMatch(/reindexed: 685 changes applied/)
    // Served with the default embedder, the index (built by the tiny model) is refused as it opens
    // (just after the server starts), saying how to fix it.
    const other = await startServer(['--data', own, '--api-key', 'k'])
    const refusal = /search is off: .* was built with the embedder transformers:tiny-bert.*run entity-registry reindex --embedder words/
    for (let waited = 0; waited < 10_000 && !refusal.test(other.lines.join('\n')); waited += 100) await new Promise((resolve) => setTimeout(resolve, 100))
    other.process.kill('SIGTERM')
    expect(other.lines.join('\n')).toMatch(refusal)
    const server = await startServer(['--data', own, '--api-key', 'k', '--embedder', model])
    try {
      let status = 0
      for (let attempt = 0; attempt < 50 && status !== 200; attempt += 1) {
        const response = await fetch(`${server.url}/v1/search?q=tax%20law`, { headers: { Authorization: 'Bearer k' } })
        status = response.status
        await response.arrayBuffer()
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 200))
      }
      expect(status).toBe(200)
    } finally {
      server.process.kill('SIGTERM')
    }
  })

  it('keeps the search index in memory once it has loaded it, and on disk alone with --no-search-in-memory, answering alike; widens words by WordNet unless --no-word-relatives, ranks the people of a state named unless --no-places', async () => {
    const own = mkdtempSync(join(tmpdir(), 'er-cli-in-memory-'))
    expect((await run(['import', fileURLToPath(new URL('../../demo/entities.jsonl', import.meta.url)), '--data', own])).code).toBe(0)
    expect((await run(['reindex', '--data', own, '--no-index-texts'])).code).toBe(0)
    const answers: string[][] = []
    const widened: string[][] = []
    const byPlace: string[][] = []
    for (const flags of [[], ['--no-search-in-memory', '--no-word-relatives', '--no-places']]) {
      const server = await startServer(['--data', own, '--api-key', 'k', '--no-index-texts', ...flags])
      try {
        const loaded = /^search: 685 entities loaded in memory in \d+\.\d s$/m
        if (flags.length === 0) {
          for (let waited = 0; waited < 20_000 && !loaded.test(server.lines.join('\n')); waited += 100) await new Promise((resolve) => setTimeout(resolve, 100))
        }
        const search = async (q: string) => {
          const response = await fetch(`${server.url}/v1/search?q=${encodeURIComponent(q)}`, { headers: { Authorization: 'Bearer k' } })
          expect(response.status).toBe(200)
          return ((await response.json()) as { data: { id: string }[] }).data.map((entity) => entity.id)
        }
        answers.push(await search('Klobu type:person'))
        // No entity's fields hold `spies`: WordNet's `intelligence officer` finds the Intelligence committees.
        widened.push(await search('spies'))
        // `Buckeye State` is Ohio: its two senators, whose fields hold none of the typed words.
        byPlace.push(await search('Buckeye State senators'))
        // Time enough for a load to be said (685 entities load in well under a second).
        if (flags.length > 0) await new Promise((resolve) => setTimeout(resolve, 2_000))
        expect(loaded.test(server.lines.join('\n')), flags.join(' ')).toBe(flags.length === 0)
      } finally {
        server.process.kill('SIGTERM')
      }
    }
    expect(answers[0]).toEqual(['k000367'])
    expect(answers[1]).toEqual(answers[0])
    expect(widened[0]!.slice(0, 2).sort()).toEqual(['cmtehlig', 'cmteslin'])
    expect(widened[1]).toEqual([])
    expect(byPlace[0]!.slice(0, 2).sort()).toEqual(['h001104', 'm001242'])
    expect(byPlace[1]!.slice(0, 2)).not.toContain('h001104')
    expect(byPlace[1]!.slice(0, 2)).not.toContain('m001242')
  })

  it('searches the demo data, and finds a bill renamed by a separate import within seconds, with no reindex', async () => {
    const search = async (q: string) => {
      const response = await get(`/v1/search?q=${encodeURIComponent(q)}`)
      return response.status === 200 ? ((await response.json()) as { data: { id: string }[] }).data.map((entity) => entity.id) : []
    }
    // The server indexes the demo data from the feed as it starts.
    const deadline = Date.now() + 20_000
    while ((await search('health care')).length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200))
    expect((await search('health care')).slice(0, 3)).toContain('hr3590111')
    expect(await search('type:legislation')).toHaveLength(19)
    // And inside the documents: the bill titled "S. 1" by the words of its summary (HTML, read in the worker).
    while (!(await search('immigration reform citizenship')).slice(0, 5).includes('s1113') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200))
    expect((await search('immigration reform citizenship')).slice(0, 5)).toContain('s1113')

    const bill = await readDocument(await get('/v1/entities/hr718113'), entityDocumentSchema)
    const file = join(mkdtempSync(join(tmpdir(), 'er-rename-')), 'rename.ndjson')
    const { texts: _texts, ...attributes } = bill.data.attributes
    writeFileSync(file, JSON.stringify({ id: 'hr718113', type: 'legislation', ...attributes, title: 'Platypus Conservation Act' }))
    const imported = await run(['import', file, '--data', data])
    expect(imported.code, imported.err).toBe(0)
    const renamed = Date.now()
    let found: string[] = []
    while (Date.now() - renamed < 10_000) {
      found = await search('platypus conservation')
      if (found[0] === 'hr718113') break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(found[0]).toBe('hr718113')
    expect(Date.now() - renamed).toBeLessThan(10_000)
  })

  it('imports into the data a server is serving, reports bad lines, and the server sees the result', async () => {
    const head = (await get('/v1/entities?page[limit]=1')).headers.get('change-feed-head')
    mkdirSync(join(data, 'incoming'), { recursive: true })
    const file = join(data, 'incoming', 'changes.ndjson')
    writeFileSync(
      file,
      [
        JSON.stringify({ id: 'x2026001', type: 'person', name: 'Jane Example', jurisdiction: 'US-WA', status: 'serving' }),
        JSON.stringify({ id: 'x2026001', type: 'person', name: 'Jane Q. Example', jurisdiction: 'US-WA', status: 'serving' }),
        JSON.stringify({ id: 'bad id' }),
        JSON.stringify({ op: 'delete', id: 'a000055' }),
        JSON.stringify({ op: 'merge', id: 'a000039', into: 'a000041' }),
        // The store's own database, one directory up: an import must not publish it.
        JSON.stringify({ id: 'leak', type: 'bill', texts: [{ renditions: [{ conversion: 'original', mime: 'application/octet-stream', filename: 'db', file: '../registry.sqlite' }] }] }),
        JSON.stringify({ id: 'leak2', type: 'bill', texts: [{ renditions: [{ conversion: 'original', mime: 'text/plain', filename: 'passwd', file: '../../../../../../../../etc/passwd' }] }] }),
      ].join('\n'),
    )
    const result = await run(['import', file, '--data', data])
    expect(result.code).toBe(1)
    // Rejected lines on stderr, in line order, and no progress drawn: stderr is not a terminal here.
    expect(result.err.trimEnd().split('\n')).toEqual([
      'line 3: id: id must match [0-9a-z]+',
      "line 6: rendition file ../registry.sqlite lies outside the NDJSON file's directory",
      "line 7: rendition file ../../../../../../../../etc/passwd lies outside the NDJSON file's directory",
    ])
    expect(result.out).toBe('applied 4, unchanged 0, rejected 3\n')
    expect((await get('/v1/entities/leak')).status).toBe(404)

    const merged = await readDocument(await get('/v1/entities/a000039'), entityDocumentSchema)
    expect(merged.data.id).toBe('a000041')
    const after = await readDocument(await get(`/v1/entities/changes?filter=type:person&page[after]=${head}`), changesDocumentSchema)
    expect(after.data.map((c) => [c.relationships.entity.data.id, c.attributes.changeType, c.attributes.changedKeys, c.attributes.mergedInto])).toEqual([
      ['x2026001', 'create', ['type', 'name', 'jurisdiction', 'status'], null],
      ['x2026001', 'update', ['name'], null],
      ['a000039', 'merge', [], 'a000041'],
    ])
    const deleted = await readDocument(await get(`/v1/entities/changes?filter=-type:*..*&page[after]=${head}`), changesDocumentSchema)
    expect(deleted.data.map((c) => [c.relationships.entity.data.id, c.attributes.changeType, c.attributes.changedKeys])).toEqual([
      ['a000055', 'delete', ['type', 'title', 'name', 'displayDate', 'jurisdiction', 'localIdentifier', 'localType', 'authority', 'status', 'texts']],
    ])
  })

  it('runs the README mirror example: its copy equals the served entities', async () => {
    const example = fileURLToPath(new URL('../../examples/mirror-feed.mjs', import.meta.url))
    const result = spawnSync(process.execPath, [example, server.url, key, '--once'], { encoding: 'utf8' })
    expect(result.status).toBe(0)
    let served = 0
    for (let next: string | undefined = '/v1/entities'; next; ) {
      const page: { data: unknown[]; links: { next?: string } } = await (await get(next.replace(server.url, ''))).json()
      served += page.data.length
      next = page.links.next
    }
    expect(result.stdout.trim().split('\n').at(-1)).toMatch(new RegExp(`^caught up at echg_[0-9a-z]+: ${served} entities$`))
  })

  it('takes keys from --api-key and ENTITY_REGISTRY_API_KEYS, creates none then, and limits the rate', async () => {
    const other = await startServer(['--data', mkdtempSync(join(tmpdir(), 'er-cli-')), '--api-key', 'flag-key', '--rate-limit', '2'], {
      ENTITY_REGISTRY_API_KEYS: 'env-key-1, env-key-2',
    })
    try {
      expect(other.lines.some((line) => line.startsWith('created'))).toBe(false)
      const send = (token: string) => fetch(`${other.url}/v1/entities`, { headers: { Authorization: `Bearer ${token}` } })
      expect((await send('flag-key')).status).toBe(200)
      expect((await send('env-key-2')).status).toBe(200)
      expect((await send('flag-key')).status).toBe(200)
      const limited = await send('flag-key')
      expect(limited.headers.get('retry-after')).toMatch(/^\d+$/)
      await expectError(limited, 429, 'rate_limited')
    } finally {
      other.process.kill('SIGTERM')
    }
  })

  it.skipIf(postgres.skipReason !== null)('imports and serves with --database postgres://', async () => {
    const schema = await freshPostgresSchema()
    const pgData = mkdtempSync(join(tmpdir(), 'er-cli-pg-'))
    let pgServer: Server | undefined
    try {
      const demo = fileURLToPath(new URL('../../demo/entities.jsonl', import.meta.url))
      expect((await run(['import', demo, '--data', pgData, '--database', schema.url])).out).toContain('applied 685, unchanged 0, rejected 0')
      pgServer = await startServer(['--data', pgData, '--database', schema.url, '--api-key', 'pg-key'])
      const response = await fetch(`${pgServer.url}/v1/entities?filter=type:legislation`, { headers: { Authorization: 'Bearer pg-key' } })
      expect((await readDocument(response, entityCollectionDocumentSchema)).data).toHaveLength(19)
    } finally {
      pgServer?.process.kill('SIGTERM')
      await new Promise((resolve) => pgServer?.process.once('exit', resolve) ?? resolve(undefined))
      await schema.drop()
    }
  })

  it('reindexes a data directory from its change feed', async () => {
    const other = mkdtempSync(join(tmpdir(), 'er-reindex-'))
    expect((await run(['import', fileURLToPath(new URL('../../demo/entities.jsonl', import.meta.url)), '--data', other])).code).toBe(0)
    const result = await run(['reindex', '--data', other])
    expect([result.code, result.err]).toEqual([0, ''])
    expect(result.out.trim().split('\n').at(-1)).toBe('reindexed: 685 changes applied')
    expect(existsSync(join(other, 'search'))).toBe(true)
  })

  it('explains itself: help for each command, the same from help COMMAND and COMMAND --help, and the version', async () => {
    const general = await run(['help'])
    expect([general.code, general.err]).toEqual([0, ''])
    expect((await run(['--help'])).out).toBe(general.out)
    for (const command of ['serve', 'import', 'reindex', 'keys create', 'keys list|revoke', 'orgs list']) expect(general.out).toContain(`entity-registry ${command}`)
    for (const [command, options] of [
      ['serve', ['--data', '--database', '--port', '--host', '--api-key', '--rate-limit', '--demo', '--base-url', '--trust-proxy', '--no-explorer', '--search', '--no-index-texts']],
      ['import', ['--data', '--database', '--batch', '--full', '--max-delete']],
      ['reindex', ['--data', '--database', '--search', '--no-index-texts']],
      ['keys', ['--org', '--label', '--expires', '--json', '--data', '--database']],
      ['orgs', ['--json', '--data', '--database']],
    ] as const) {
      const help = await run(['help', command])
      expect(help.code).toBe(0)
      expect(help.out).toMatch(new RegExp(`^Usage: entity-registry ${command}`))
      expect((await run([command, '--help'])).out).toBe(help.out)
      expect((await run([command, '-h'])).out).toBe(help.out)
      for (const option of options) expect(help.out, `${command} --help names ${option}`).toContain(`  ${option} `)
    }
    // "none" of --search switches search off (serve only); "none" of --embedder keeps no vectors (the index inside the database).
    const searchOption = /\n {2}--search [\s\S]*?(?=\n {2}-)/
    expect(searchOption.exec((await run(['help', 'serve'])).out)![0]).toContain('"none": search switched')
    expect(/\n {2}--embedder [\s\S]*?(?=\n {2}-|$)/.exec((await run(['help', 'serve'])).out)![0]).toContain('none (with --search\n                    postgres')
    expect(searchOption.exec((await run(['help', 'reindex'])).out)![0]).not.toContain('"none"')
    const version = await run(['--version'])
    expect([version.code, version.out]).toEqual([0, `${packageJson.version}\n`])
  })

  it('describes --database alike in --help and the command line guide: a SQLite path, postgres:// or pglite:', async () => {
    const flat = (text: string) => text.replaceAll('`', '').replace(/\s+/g, ' ')
    const readme = flat(readFileSync(fileURLToPath(new URL('../../docs/guides/command-line.md', import.meta.url)), 'utf8').split('\n- ').find((item) => item.startsWith('`--database'))!)
    const help = flat(/ {2}--database[\s\S]*?(?=\n {2}-)/.exec((await run(['help', 'serve'])).out)![0])
    for (const form of ['SQLite file path', 'postgres://user@host/db', 'postgresql://', 'pglite:DIR', 'pglite: alone keeps it in memory']) {
      expect(readme, `docs/guides/command-line.md: ${form}`).toContain(form)
      expect(help, `--help: ${form}`).toContain(form)
    }
  })

  it('answers bad usage with one line on stderr naming the option, exit code 2, and creates nothing', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'er-cli-usage-'))
    const cases: [string[], string][] = [
      [[], 'name a command'],
      [['frobnicate'], 'unknown command "frobnicate"'],
      [['help', 'frobnicate'], 'unknown command "frobnicate"'],
      [['serve', 'now'], 'serve takes no arguments, not "now"'],
      [['serve', '--port', '99999'], '--port takes a port number from 0 to 65535, not "99999"'],
      [['serve', '--port', 'abc'], '--port takes a whole number, not "abc"'],
      [['serve', '--port'], "'--port <value>' argument missing"],
      [['serve', '--rate-limit', '-1'], '--rate-limit'],
      [['serve', '--prot', '80'], "Unknown option '--prot'"],
      [['serve', '--demo=yes'], "'--demo' does not take an argument"],
      [['serve', '--base-url', 'api.example.org'], '--base-url takes an absolute http(s) address'],
      [['serve', '--base-url', 'ftp://api.example.org/'], '--base-url takes an absolute http(s) address'],
      [['serve', '--base-url', 'https://api.example.org/?x=1'], '--base-url takes an absolute http(s) address'],
      [['serve', '--database', 'mysql://root@localhost/db'], '--database: mysql: is not supported'],
      [['keys', 'create', '--org', 'acme', '--database', 'sqlite:registry.db'], '--database: sqlite: is not supported'],
      [['serve', '--blobs', 'gs://bucket/renditions'], '--blobs: gs: is not supported'],
      [['serve', '--read-database', 'replica.sqlite', '--database', 'postgres://db/x'], '--read-database takes a postgres:// or postgresql:// URL of a streaming replica, not "replica.sqlite"'],
      [['serve', '--read-database', 'postgres://replica/x'], '--read-database reads from a replica of the PostgreSQL database: it needs --database postgres://… (the primary)'],
      [['serve', '--read-database', 'postgres://replica/x', '--database', 'pglite:'], 'it needs --database postgres://… (the primary)'],
      [['serve', '--max-replica-lag', '10'], '--max-replica-lag bounds the lag of the replica --read-database names: give --read-database too'],
      [['serve', '--database', 'postgres://db/x', '--read-database', 'postgres://replica/x', '--max-replica-lag', '0'], '--max-replica-lag takes a number of seconds above 0, up to 86400, not "0"'],
      [['serve', '--database', 'postgres://db/x', '--read-database', 'postgres://replica/x', '--max-replica-lag', 'soon'], '--max-replica-lag takes a number of seconds above 0, up to 86400, not "soon"'],
      [['import', 'a.ndjson', '--read-database', 'postgres://replica/x'], "Unknown option '--read-database'"],
      [['reindex', '--embedder', 'bert'], '--embedder takes words, transformers:DIR or none (with --search postgres), not "bert"'],
      [['reindex', '--search', 'none'], 'reindex needs a search index: --search takes a directory, a LanceDB URI or postgres, not "none"'],
      [['serve', '--search', 'postgres'], "--search postgres keeps the index in the store's database: it needs --database postgres://… or pglite:DIR"],
      [['reindex', '--search', 'postgres', '--database', 'registry.sqlite'], "--search postgres keeps the index in the store's database"],
      [['serve', '--embedder', 'none'], '--embedder none (no vectors) works only with the index inside the database: --search postgres'],
      [['import', 'a.ndjson', '--blobs', ''], '--blobs needs a directory or s3://bucket/prefix'],
      [['import'], 'import needs the NDJSON file'],
      [['import', 'a.ndjson', 'b.ndjson'], 'import takes one file, not also "b.ndjson"'],
      [['import', 'a.ndjson', '--port', '80'], "Unknown option '--port'"],
      [['import', 'missing.ndjson'], 'import: no such file: missing.ndjson'],
      [['import', cwd], `import: ${cwd} is a directory, not an NDJSON file`],
      [['import', '-', '--batch', '0'], '--batch takes a whole number from 1 to 100000, not "0"'],
      [['import', '-', '--batch', '2.5'], '--batch takes a whole number from 1 to 100000, not "2.5"'],
      [['import', '-', '--batch', '100001'], '--batch takes a whole number from 1 to 100000, not "100001"'],
      [['import', '-', '--max-delete', '5%'], '--max-delete limits a full snapshot: give --full too'],
      [['import', '-', '--full', '--max-delete', 'lots'], '--max-delete takes a number of entities (300) or a percentage from 0% to 100% (25%), not "lots"'],
      [['import', '-', '--full', '--max-delete', '101%'], '--max-delete takes a number of entities (300) or a percentage from 0% to 100% (25%), not "101%"'],
      [['import', '-', '--full', '--max-delete', '2.5'], '--max-delete takes a number of entities (300) or a percentage from 0% to 100% (25%), not "2.5"'],
      [['import', '-', '--full', '--max-delete=-3'], '--max-delete takes a number of entities (300) or a percentage from 0% to 100% (25%), not "-3"'],
      [['keys'], 'keys takes "keys create", "keys list", "keys revoke"'],
      [['keys', 'delete'], 'keys takes "keys create", "keys list", "keys revoke", not "keys delete"'],
      [['orgs', 'create', 'acme'], 'orgs takes "orgs list", not "orgs create"'],
      [['keys', 'create'], 'keys create needs --org NAME'],
      [['keys', 'create', '--org', 'acme', '--expires', '2020-01-01'], '--expires 2020-01-01 is in the past'],
      [['keys', 'create', '--org', 'acme', '--expires', '5y'], '--expires takes a duration (90d, 12h, 30m, 45s) or a date'],
      [['keys', 'create', '--org', 'acme', '--expires', '2027-02-30'], '--expires takes a duration'],
      [['keys', 'list', '--label', 'ci'], 'keys list takes no --label'],
      [['keys', 'revoke'], 'keys revoke takes one key id, or --org NAME'],
      [['keys', 'revoke', 'er_a', '--org', 'acme'], 'keys revoke takes one key id, or --org NAME'],
    ]
    for (const [args, message] of cases) {
      const result = await run(args, {}, cwd)
      expect(result.code, args.join(' ')).toBe(2)
      expect(result.out, args.join(' ')).toBe('')
      expect(result.err.split('\n'), args.join(' ')).toEqual([expect.stringContaining(message), ''])
      expect(result.err).toMatch(/^entity-registry: /)
    }
    // No data directory, no SQLite file: not in the working directory, nor where --data pointed.
    expect(readdirSync(cwd)).toEqual([])
    expect((await run(['import', join(cwd, 'missing.ndjson'), '--data', join(cwd, 'data')])).code).toBe(2)
    expect(readdirSync(cwd)).toEqual([])
    // Some forty processes: on a loaded machine of 2 cores they take more than the default 30 s.
  }, 90_000)

  it('imports standard input and gzip as warehouses ship them: a .gz file, gzip piped in, plain text piped in', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'er-cli-input-'))
    const data = join(dir, 'data')
    const records = (from: number, to: number, title: string) =>
      Array.from({ length: to - from }, (_, i) => JSON.stringify({ id: `p${from + i}`, type: 'person', name: `Person ${from + i}`, title })).join('\n')
    writeFileSync(join(dir, 'first.ndjson.gz'), gzipSync(records(0, 1200, 'first')))
    const fromFile = await run(['import', join(dir, 'first.ndjson.gz'), '--data', data, '--batch', '100'])
    expect([fromFile.code, fromFile.out, fromFile.err]).toEqual([0, 'applied 1200, unchanged 0, rejected 0\n', ''])
    // The real gzip and a real pipe into the child's standard input, as a shell runs it.
    writeFileSync(join(dir, 'second.ndjson'), records(0, 1500, 'second'))
    const piped = spawnSync('sh', ['-c', `gzip -c second.ndjson | '${process.execPath}' '${CLI}' import - --data data`], { cwd: dir, encoding: 'utf8' })
    expect([piped.status, piped.stdout, piped.stderr]).toEqual([0, 'applied 1500, unchanged 0, rejected 0\n', ''])
    const plain = spawnSync(process.execPath, [CLI, 'import', '-', '--data', data], { input: `${records(1400, 1600, 'second')}\n{broken\n`, encoding: 'utf8' })
    expect([plain.status, plain.stdout, plain.stderr]).toEqual([1, 'applied 100, unchanged 100, rejected 1\n', 'line 201: is not valid JSON\n'])
  })

  it('refuses a 12 MB line from standard input as it streams past, as fast as an input without it, naming its line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'er-cli-huge-'))
    const huge = JSON.stringify({ id: 'huge', type: 'person', archive: 'x'.repeat(12 * 1024 * 1024) })
    const importTimed = (lines: string[]) => {
      const started = performance.now()
      const result = spawnSync(process.execPath, [CLI, 'import', '-', '--data', join(dir, 'data')], { input: lines.join('\n'), encoding: 'utf8' })
      return { result: [result.status, result.stdout, result.stderr], ms: performance.now() - started }
    }
    const [before, after] = [JSON.stringify({ id: 'before', type: 'person' }), JSON.stringify({ id: 'after', type: 'person' })]
    importTimed([before, after])
    const refused = importTimed([before, huge, after])
    expect(refused.result).toEqual([1, 'applied 0, unchanged 2, rejected 1\n', `line 2: is ${huge.length} bytes as JSON; a record may have at most 1048576\n`])
    // Held whole and parsed, the line took 4 to 9 s more than the run without it (a run of about
    // 0.5 s): a ratio, each side the faster of two runs, since a busy machine slows either run alone.
    const fastest = (lines: string[]) => Math.min(importTimed(lines).ms, importTimed(lines).ms)
    expect(fastest([before, huge, after]) / fastest([before, after])).toBeLessThan(3)
  })

  it('stops at a truncated gzip file with the line it stopped at; the batches before it are applied', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'er-cli-truncated-'))
    const data = join(dir, 'data')
    const compressed = gzipSync(Array.from({ length: 5000 }, (_, i) => JSON.stringify({ id: `p${i}`, type: 'person', name: `Person ${i}` })).join('\n'))
    writeFileSync(join(dir, 'cut.ndjson.gz'), compressed.subarray(0, Math.floor(compressed.length * 0.6)))
    const result = await run(['import', join(dir, 'cut.ndjson.gz'), '--data', data, '--batch', '700'])
    expect(result.code).toBe(1)
    const stopped = /^entity-registry: stopped at line (\d+): gzip: unexpected end of file\n$/.exec(result.err)
    expect(stopped, result.err).not.toBeNull()
    const line = Number(stopped![1])
    expect((line - 1) % 700).toBe(0)
    const store = await createSqliteStore({ file: join(data, 'registry.sqlite') })
    try {
      const page = await store.listEntities({ qualifiers: [], after: null, limit: 5000 })
      expect(page.entities).toHaveLength(line - 1)
    } finally {
      await store.close()
    }
  })

  it.skipIf(!existsSync('/usr/bin/script'))('shows import progress, rate, percent and time left on a terminal', () => {
    const dir = mkdtempSync(join(tmpdir(), 'er-cli-tty-'))
    const file = join(dir, 'many.ndjson')
    writeFileSync(file, Array.from({ length: 3000 }, (_, i) => JSON.stringify({ id: `p${i}`, type: 'person', name: `Person ${i}` })).join('\n'))
    // script(1) runs the command on a pseudo-terminal, as a user at a terminal would.
    const command = [process.execPath, CLI, 'import', file, '--data', join(dir, 'data')].map((word) => `'${word}'`).join(' ')
    const result = spawnSync('script', ['-qec', command, '/dev/null'], { encoding: 'utf8' })
    expect(result.status).toBe(0)
    const drawn = result.stdout.split('\r').map((part) => part.replace(/\x1b\[2K/g, '').trim()).filter((part) => part.startsWith('import:'))
    // The file's size is known: percent and time left.
    expect(drawn.at(-1)).toMatch(/^import: 3,000 lines, [\d,]+ lines\/s, \d+\.\d s, 100%, 0 s left$/)
    expect(result.stdout).toContain('applied 3000, unchanged 0, rejected 0')
  })
})
