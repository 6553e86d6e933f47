/**
 * The serverless Next.js example (examples/nextjs-serverless) as a user deploys it: the demo data
 * imported into PostgreSQL with its renditions on S3 (s3rver), the search index filled inside the
 * database by `reindex` (full text and names: the test server has no pgvector), the app built with
 * `output: 'standalone'`, its standalone server started, and the HTTP conformance suite run against
 * it. The output must stay small enough for a function platform, with no native module.
 */
import { execFile, spawnSync } from 'node:child_process'
import { lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { promisify } from 'node:util'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { deflateRawSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { httpConformanceCases, type ConformanceTarget } from '../../src/testing/index.js'
import { searchDocumentSchema } from '../../src/contract/schemas.js'
import { freshPostgresSchema, POSTGRES_URL, storeDialects } from '../stores/each-store.js'
import { CLI } from '../support/cli.js'
import { assertJsonApi, readDocument } from '../support/documents.js'
import { withPostgresClient } from '../support/postgres-client.js'
import { installedExample, npm, startListening, type ListeningProcess } from '../support/processes.js'
import { startS3Server, type S3Server } from '../support/s3-server.js'

const KEY = 'serverless-key'
const DEMO = fileURLToPath(new URL('../../demo/entities.jsonl', import.meta.url))
const BLOBS = 's3://registry/renditions'
/** What a function platform takes, held with room to spare: the output unzipped, and zipped. */
const MAX_STANDALONE_BYTES = 60 * 1024 * 1024
const MAX_ZIP_BYTES = 50 * 1024 * 1024
const run = promisify(execFile)
const postgres = storeDialects.find((dialect) => dialect.name === 'postgres')!

/** Every regular file under `directory`. Not its symbolic links: Next's aliases of packages that are in the output already. */
function filesUnder(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name)
    if (entry.isDirectory()) return filesUnder(path)
    return entry.isFile() ? [path] : []
  })
}

/** A zip's size: each file deflated as zip stores it, with its local header and central directory entry. */
function zipBytes(files: string[], root: string): number {
  return files.reduce((total, file) => total + deflateRawSync(readFileSync(file)).length + 76 + 2 * (file.length - root.length), 22)
}

describe.skipIf(postgres.skipReason !== null)(`the serverless Next.js example on PostgreSQL and S3 (${POSTGRES_URL})`, () => {
  const data = mkdtempSync(join(tmpdir(), 'er-serverless-'))
  let example: string
  let schema: Awaited<ReturnType<typeof freshPostgresSchema>> | undefined
  let s3: S3Server | undefined
  let server: ListeningProcess | undefined
  const target = (): ConformanceTarget => ({ baseUrl: `${server!.url}/api/registry`, apiKey: KEY, validateDocument: assertJsonApi })

  // Not spawnSync: s3rver answers from this process's event loop.
  async function cli(args: string[], env: Record<string, string>): Promise<string> {
    const { stdout } = await run(process.execPath, [CLI, ...args], { timeout: 180_000, env: { ...process.env, ...env } })
    return stdout
  }

  beforeAll(async () => {
    example = installedExample('nextjs-serverless')
    await withPostgresClient(POSTGRES_URL, (client) => client.query('create extension if not exists pg_trgm schema public')).catch(() => undefined)
    schema = await freshPostgresSchema()
    // pg_trgm lives in public: the schema's search path reaches it.
    const url = new URL(schema.url)
    url.searchParams.set('options', `${url.searchParams.get('options')},public`)
    s3 = await startS3Server()
    const database = ['--data', data, '--database', url.href, '--blobs', BLOBS]
    await cli(['import', DEMO, ...database], s3.environment)
    expect((await cli(['reindex', ...database, '--search', 'postgres', '--embedder', 'none'], s3.environment)).trim().split('\n').at(-1)).toBe('reindexed: 685 changes applied')
    const build = spawnSync(npm, ['run', 'build'], { cwd: example, encoding: 'utf8', timeout: 300_000 })
    if (build.status !== 0) throw new Error(`next build failed:\n${build.stdout}\n${build.stderr}`)
    server = await startListening(npm, ['start'], {
      cwd: example,
      env: { PORT: '0', HOST: '127.0.0.1', DATABASE_URL: url.href, BLOBS_URL: BLOBS, EMBEDDER: 'none', ENTITY_REGISTRY_API_KEYS: KEY, ...s3.environment },
    })
  }, 600_000)
  afterAll(async () => {
    await server?.stop()
    await s3?.close()
    await schema?.drop()
    rmSync(data, { recursive: true, force: true })
  })

  it('builds a standalone output under 60 MB (a zip under 50 MB) with no native module', () => {
    const standalone = join(example, '.next', 'standalone')
    const files = filesUnder(standalone)
    const bytes = files.reduce((total, file) => total + lstatSync(file).size, 0)
    const zipped = zipBytes(files, standalone)
    console.log(`examples/nextjs-serverless/.next/standalone: ${(bytes / 2 ** 20).toFixed(1)} MB in ${files.length} files, zipped ${(zipped / 2 ** 20).toFixed(1)} MB`)
    expect({
      nativeModules: files.filter((file) => file.endsWith('.node')),
      underLimit: bytes < MAX_STANDALONE_BYTES,
      zipUnderLimit: zipped < MAX_ZIP_BYTES,
      // What only the embedded defaults, other embedders and image optimization need (Next's trace
      // keeps sharp's package.json, from resolving it, with none of its code).
      excluded: files.filter((file) => /node_modules\/(@lancedb|better-sqlite3|@huggingface|onnxruntime|sharp|@img|@electric-sql)\/(?!package\.json$)/.test(file)),
    }).toEqual({ nativeModules: [], underLimit: true, zipUnderLimit: true, excluded: [] })
  })

  for (const conformanceCase of httpConformanceCases) it(conformanceCase.name, () => conformanceCase.run(target()), 60_000)

  // The app opens the registry with the nickname list read from the package's files in the output:
  // every case above would have failed had that file not been there.
  it('searches the index inside PostgreSQL, filled by reindex: prefixes and typos, with a lag of 0', async () => {
    const search = async (q: string) => {
      const response = await fetch(`${target().baseUrl}/v1/search?q=${encodeURIComponent(q)}`, { headers: { Authorization: `Bearer ${KEY}` } })
      return { lag: response.headers.get('Search-Index-Lag'), ids: (await readDocument(response, searchDocumentSchema)).data.map((entity) => entity.id) }
    }
    const [prefix, typo] = [await search('Klobu'), await search('Abraham Lincon')]
    expect([prefix.lag, typo.lag, prefix.ids[0], typo.ids[0]]).toEqual(['0', '0', 'k000367', 'l000313'])
  })
})
