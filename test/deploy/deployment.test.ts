/**
 * The scale-out topology of docs/deploy.md, on this machine: two `serve` processes over one
 * PostgreSQL database, one S3-protocol server (s3rver) and one Redis, while an `import` process
 * writes. Both instances must serve one truth, share a key's rate limit, and lose nothing when one
 * stops.
 */
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLI, startServer, type Server } from '../support/cli.js'
import { startS3Server, type S3Server } from '../support/s3-server.js'
import { freshPostgresSchema, POSTGRES_URL, storeDialects } from '../stores/each-store.js'
import { redisReachable, REDIS_URL } from '../support/redis.js'

const demo = (path: string) => new URL(`../../demo/${path}`, import.meta.url).pathname
const KEY = `k${randomUUID().replaceAll('-', '')}`
const LIMITED_KEY = `k${randomUUID().replaceAll('-', '')}`
const LIMIT = 300
const postgres = storeDialects.find((dialect) => dialect.name === 'postgres')!

describe.runIf(postgres.skipReason === null && (await redisReachable()))(`two instances over PostgreSQL, S3 and Redis (${POSTGRES_URL}, ${REDIS_URL})`, () => {
  let s3: S3Server
  let schema: Awaited<ReturnType<typeof freshPostgresSchema>>
  const servers: Server[] = []
  let environment: Record<string, string>
  let shared: string[]

  /** Runs a CLI command to its end; resolves with its exit code and output. */
  const cli = (args: string[]) =>
    new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...environment }, stdio: ['ignore', 'pipe', 'pipe'] })
      let output = ''
      child.stdout.on('data', (chunk) => (output += chunk))
      child.stderr.on('data', (chunk) => (output += chunk))
      child.once('exit', (code) => resolve({ code, output }))
    })
  /** One `serve` of the topology, with a data directory of its own (its search index lives there). */
  const startInstance = () =>
    startServer(
      ['--data', mkdtempSync(join(tmpdir(), 'er-deploy-serve-')), ...shared, '--redis', REDIS_URL, '--rate-limit', String(LIMIT), '--api-key', KEY, '--api-key', LIMITED_KEY],
      environment,
    )
  const get = (server: Server, path: string, key = KEY) => fetch(`${server.url}${path}`, { headers: { Authorization: `Bearer ${key}` } })
  const json = async (server: Server, path: string) => {
    const response = await get(server, path)
    expect(response.status, `${path} on ${server.url}`).toBe(200)
    return (await response.json()) as { data: { id: string; attributes: Record<string, unknown> }[]; links: { next?: string } }
  }
  /** Every entity of a filter, by following links.next, with the origin taken out. */
  const everything = async (server: Server, filter: string) => {
    const found: unknown[] = []
    for (let next: string | undefined = `/v1/entities?filter=${filter}&page[limit]=100`; next !== undefined; ) {
      const page = await json(server, next)
      found.push(...page.data)
      next = page.links.next?.slice(server.url.length)
    }
    return JSON.parse(JSON.stringify(found).replaceAll(server.url, 'ORIGIN'))
  }

  beforeAll(async () => {
    ;[s3, schema] = await Promise.all([startS3Server(), freshPostgresSchema()])
    environment = s3.environment
    shared = ['--database', schema.url, '--blobs', `s3://${s3.bucket}/renditions`]
    const imported = await cli(['import', demo('entities.jsonl'), '--data', mkdtempSync(join(tmpdir(), 'er-deploy-import-')), ...shared])
    expect(imported.code, imported.output).toBe(0)
    for (let instance = 0; instance < 2; instance += 1) servers.push(await startInstance())
  }, 120_000)

  afterAll(async () => {
    for (const server of servers) server.process.kill('SIGTERM')
    await s3?.close()
    await schema?.drop()
  })

  it('serves the bytes the import stored in S3 through either instance', async () => {
    const bill = (await json(servers[0]!, '/v1/entities/hr3590111')).data as unknown as { attributes: { texts: { renditions: { filename: string; links: { content: string } }[] }[] } }
    const rendition = bill.attributes.texts.flatMap((text) => text.renditions)[0]!
    const stored = readFileSync(demo(`renditions/${rendition.filename}`))
    const etags = []
    for (const server of servers) {
      const response = await get(server, new URL(rendition.links.content).pathname)
      expect(response.status).toBe(200)
      expect(Buffer.from(await response.arrayBuffer()).equals(stored)).toBe(true)
      etags.push(response.headers.get('etag'))
    }
    // The ETag is the object store's own: the same through either instance.
    expect(etags[0]).toMatch(/^"\S+"$/)
    expect(etags[1]).toBe(etags[0])
  })

  it('answers the same list, get, changes and search on both while an import writes, and loses nothing when one stops', async () => {
    // 300 persons renamed with a word no entity has, written while both instances are read.
    const persons = (await everything(servers[0]!, 'type:person')).slice(0, 300) as { id: string; attributes: Record<string, unknown> }[]
    const file = join(mkdtempSync(join(tmpdir(), 'er-deploy-')), 'renames.ndjson')
    writeFileSync(file, persons.map((person) => JSON.stringify({ id: person.id, type: 'person', ...person.attributes, title: `Zyzzyvologist ${person.id}`, texts: [] })).join('\n'))
    const writing = cli(['import', file, '--data', mkdtempSync(join(tmpdir(), 'er-deploy-import-')), ...shared])
    const during = await Promise.all(servers.map((server) => json(server, '/v1/entities?filter=type:committee&page[limit]=100')))
    expect(during[0]!.data).toEqual(JSON.parse(JSON.stringify(during[1]!.data).replaceAll(servers[1]!.url, servers[0]!.url)))
    // One instance stops while the import is still writing.
    servers[0]!.process.kill('SIGTERM')
    const written = await writing
    expect(written.code, written.output).toBe(0)
    expect(written.output).toContain('applied 300')

    const survivor = servers[1]!
    const renamed = await everything(survivor, 'title:~zyzzyvologist')
    expect(renamed).toHaveLength(300)
    // A new instance over the same services serves exactly what the survivor does.
    const fresh = await startInstance()
    servers.push(fresh)
    for (const filter of ['-type:%22%22', 'type:person%20jurisdiction:US-WA']) expect(await everything(fresh, filter)).toEqual(await everything(survivor, filter))
    expect(await json(fresh, '/v1/entities/hr3590111')).toEqual(JSON.parse(JSON.stringify(await json(survivor, '/v1/entities/hr3590111')).replaceAll(survivor.url, fresh.url)))
    const feed = async (server: Server) => {
      const ids: string[] = []
      for (let next: string | undefined = '/v1/entities/changes?filter=-type:%22%22&page[limit]=100'; next !== undefined; ) {
        const page = await json(server, next)
        ids.push(...page.data.map((change) => change.id))
        next = page.data.length === 0 ? undefined : page.links.next?.slice(server.url.length)
      }
      return ids
    }
    const feeds = await Promise.all([survivor, fresh].map(feed))
    expect(feeds[1]).toEqual(feeds[0])
    expect(feeds[0]!.length).toBe(685 + 300)

    // Each instance keeps its own search index, following the shared feed: both find the new word.
    const searchIds = async (server: Server) => {
      for (let attempt = 0; attempt < 60; attempt += 1) {
        const response = await get(server, '/v1/search?q=zyzzyvologist%20type:person')
        if (response.status === 200) {
          const ids = ((await response.json()) as { data: { id: string }[] }).data.map((entity) => entity.id)
          if (ids.length === 100) return ids.sort()
        }
        await new Promise((resolve) => setTimeout(resolve, 500))
      }
      throw new Error(`${server.url} never found the renamed persons`)
    }
    const [fromSurvivor, fromFresh] = await Promise.all([searchIds(survivor), searchIds(fresh)])
    expect(fromFresh).toEqual(fromSurvivor)
  }, 120_000)

  it('gives a key its limit once across both instances, not twice', async () => {
    const [a, b] = [servers[1]!, servers[2]!]
    let allowed = 0
    const started = performance.now()
    for (let request = 0; request < 2 * LIMIT; request += 1) {
      const response = await get(request % 2 === 0 ? a : b, '/v1/entities/hr3590111', LIMITED_KEY)
      await response.arrayBuffer()
      if (response.status === 429) break
      expect(response.status).toBe(200)
      allowed += 1
    }
    // The bucket refills at LIMIT a minute while the loop runs: LIMIT and what refilled, never twice it.
    const refilled = Math.ceil((LIMIT * (performance.now() - started)) / 60_000)
    expect(allowed).toBeGreaterThanOrEqual(LIMIT)
    expect(allowed).toBeLessThanOrEqual(LIMIT + refilled + 1)
    expect(allowed).toBeLessThan(2 * LIMIT)
  })
})
