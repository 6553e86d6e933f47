import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { changesDocumentSchema, entityCollectionDocumentSchema, entityDocumentSchema } from '../../src/contract/schemas.js'
import { freshPostgresSchema, storeDialects } from '../kysely/dialects.js'
import { expectError, readDocument } from '../support/documents.js'

const postgres = storeDialects.find((dialect) => dialect.name === 'postgres')!

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url))

interface Server {
  process: ChildProcess
  url: string
  lines: string[]
}

/** Starts `entity-registry serve` and waits for its "listening on" line. */
async function startServer(args: string[], env: Record<string, string> = {}): Promise<Server> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], {
    env: { ...process.env, ENTITY_REGISTRY_API_KEYS: '', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const lines: string[] = []
  const url = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${lines.join('\n')}`)))
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line)
      const match = /^listening on (http:\/\/\S+)$/.exec(line)
      if (match) resolve(match[1]!)
    })
  })
  return { process: child, url, lines }
}

function run(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, ...env } })
  return { code: result.status, out: result.stdout, err: result.stderr }
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
    expect(key).toMatch(/^er_[A-Za-z0-9_-]{43}$/)
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    const document = await readDocument(await get('/v1/entities?filter=type:legislation'), entityCollectionDocumentSchema)
    expect(document.data).toHaveLength(19)
    await expectError(await get('/v1/entities', 'wrong'), 401, 'unauthorized')
  })

  it('imports into the data a server is serving, reports bad lines, and the server sees the result', async () => {
    const head = (await get('/v1/entities?page[limit]=1')).headers.get('change-feed-head')
    const file = join(data, 'changes.ndjson')
    writeFileSync(
      file,
      [
        JSON.stringify({ id: 'x2026001', type: 'person', name: 'Jane Example', jurisdiction: 'US-WA', status: 'serving' }),
        JSON.stringify({ id: 'x2026001', type: 'person', name: 'Jane Q. Example', jurisdiction: 'US-WA', status: 'serving' }),
        JSON.stringify({ id: 'bad id' }),
        JSON.stringify({ op: 'delete', id: 'a000055' }),
        JSON.stringify({ op: 'merge', id: 'a000039', into: 'a000041' }),
      ].join('\n'),
    )
    const result = run(['import', file, '--data', data])
    expect(result.code).toBe(1)
    expect(result.out).toContain('line 3: id: id must match [0-9a-z]+')
    expect(result.out).toContain('applied 4, unchanged 0, rejected 1')

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

  it('creates keys that a running server accepts', async () => {
    const created = run(['keys', 'create', '--data', data])
    expect(created.code).toBe(0)
    const newKey = created.out.trim()
    expect(newKey).toMatch(/^er_/)
    expect((await get('/v1/entities?page[limit]=1', newKey)).status).toBe(200)
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
      expect(run(['import', demo, '--data', pgData, '--database', schema.url]).out).toContain('applied 685, unchanged 0, rejected 0')
      pgServer = await startServer(['--data', pgData, '--database', schema.url, '--api-key', 'pg-key'])
      const response = await fetch(`${pgServer.url}/v1/entities?filter=type:legislation`, { headers: { Authorization: 'Bearer pg-key' } })
      expect((await readDocument(response, entityCollectionDocumentSchema)).data).toHaveLength(19)
    } finally {
      pgServer?.process.kill('SIGTERM')
      await new Promise((resolve) => pgServer?.process.once('exit', resolve) ?? resolve(undefined))
      await schema.drop()
    }
  })

  it('explains bad usage with exit code 2', () => {
    expect(run(['frobnicate']).code).toBe(2)
    expect(run(['serve', '--port', 'abc']).err).toContain('--port takes a whole number')
    expect(run(['import']).code).toBe(2)
  })
})
