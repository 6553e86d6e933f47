/**
 * What users get is the published package: pack a clean copy of this checkout (its files that git
 * tracks or would track, no dist/: prepack builds it), install the
 * tarball into a fresh project, typecheck a file that uses every subpath under --strict (nodenext and
 * bundler resolution), run it, and run `npx entity-registry serve --demo` from there.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeTinyModel } from '../support/tiny-model.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; exports: Record<string, unknown>; devDependencies: Record<string, string> }
const SUBPATHS = Object.keys(manifest.exports).filter((subpath) => !subpath.endsWith('.json'))
// onnxruntime-node (under @huggingface/transformers) would otherwise fetch CUDA binaries where it finds nvcc.
const npm = (args: string[], cwd: string, env: Record<string, string> = {}) =>
  execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', ONNXRUNTIME_NODE_INSTALL_CUDA: 'skip', ...env } })

/**
 * better-sqlite3's binary for this Node, as the prebuilt binary a user's install downloads: this
 * machine reaches no download host, and compiling it again took two of the suite's five minutes in CI.
 * The checkout's own build, packed as prebuild-install looks for it locally (`<name>_local_prebuilds`);
 * a consumer that resolves another version finds none and compiles, as before.
 */
function betterSqlitePrebuild(work: string): Record<string, string> {
  const driver = join(ROOT, 'node_modules', 'better-sqlite3')
  const { version } = JSON.parse(readFileSync(join(driver, 'package.json'), 'utf8')) as { version: string }
  const prebuilds = join(work, 'prebuilds')
  mkdirSync(prebuilds)
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`
  execFileSync('tar', ['-czf', join(prebuilds, name), 'build/Release/better_sqlite3.node'], { cwd: driver })
  return { npm_config_better_sqlite3_local_prebuilds: prebuilds }
}

describe('the published package', () => {
  const work = mkdtempSync(join(tmpdir(), 'er-package-'))
  const consumer = join(work, 'consumer')
  let tarball = ''
  const servers: ChildProcess[] = []

  beforeAll(() => {
    // Packed in a copy: prepack's build empties dist/ first, and the other suites run the CLI from
    // this checkout's dist/ meanwhile (a CLI started then exited with 1).
    const checkout = join(work, 'checkout')
    const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter((file) => file !== '' && existsSync(join(ROOT, file)))
    for (const file of files) cpSync(join(ROOT, file), join(checkout, file), { recursive: true })
    symlinkSync(join(ROOT, 'node_modules'), join(checkout, 'node_modules'), 'dir')
    // prepack's build prints before npm's JSON: the report is the array that starts on its own line.
    const output = npm(['pack', '--json', '--pack-destination', work], checkout)
    const packed = JSON.parse(output.slice(output.search(/^\[$/m))) as { filename: string; files: { path: string }[] }[]
    tarball = join(work, packed[0]!.filename)
    writeFileSync(join(work, 'files.json'), JSON.stringify(packed[0]!.files.map((file) => file.path)))
    mkdirSync(consumer)
    writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }))
    // The optional peer at the oldest version it may be (and the one @lancedb/lancedb brings).
    // PGlite 0.4, the last line that ships pgvector, for search inside it by meaning.
    npm(['install', tarball, `typescript@${manifest.devDependencies.typescript}`, '@types/node@22', '@huggingface/transformers@3.0.2', '@electric-sql/pglite@0.4.6'], consumer, betterSqlitePrebuild(work))
  }, 600_000)
  afterAll(() => {
    // npx starts the CLI as its child: end the whole process group.
    for (const server of servers) if (server.pid !== undefined && server.exitCode === null) process.kill(-server.pid, 'SIGTERM')
  })

  it('holds the built code, the word vectors, the nickname list and the WordNet relatives with their licenses, the demo data and the docs, and no sources or tests', () => {
    const files: string[] = JSON.parse(readFileSync(join(work, 'files.json'), 'utf8'))
    for (const expected of ['dist/index.js', 'dist/index.d.ts', 'dist/cli/main.js', 'dist/openapi.json', 'assets/word-vectors.bin', 'assets/nicknames/names.csv', 'assets/nicknames/LICENSE', 'assets/nicknames/SOURCE.md', 'assets/wordnet/relatives.txt.gz', 'assets/wordnet/LICENSE', 'demo/entities.jsonl', 'docs/registry-interface-v1.md', 'LICENSE', 'README.md']) {
      expect(files, expected).toContain(expected)
    }
    expect(files.filter((file) => file.startsWith('src/') || file.startsWith('test/'))).toEqual([])
    // The optional peers stay out of the public types: a consumer compiles without them.
    const declarations = files.filter((file) => file.endsWith('.d.ts')).map((file) => readFileSync(join(ROOT, file), 'utf8'))
    expect(declarations.filter((text) => /from '(@huggingface\/transformers|pg|ioredis|@electric-sql\/pglite)'|import\('@huggingface/.test(text))).toEqual([])
  })

  it('passes publint and Are the Types Wrong', () => {
    expect(execFileSync('npx', ['publint', '--pack', 'false', join(consumer, 'node_modules', 'entity-registry')], { cwd: ROOT, encoding: 'utf8' })).toMatch(/All good/)
    execFileSync('npx', ['attw', tarball, '--profile', 'esm-only'], { cwd: ROOT, encoding: 'utf8' })
  }, 60_000)

  it('typechecks under --strict with nodenext and bundler resolution, and runs', () => {
    const model = writeTinyModel('tiny')
    const imports = SUBPATHS.map((subpath, index) => `import * as entry${index} from 'entity-registry${subpath.slice(1)}'`)
    writeFileSync(
      join(consumer, 'check.ts'),
      `${imports.join('\n')}
import { createApiKeyAuthenticator, createIndexer, createRegistry, createSearch } from 'entity-registry'
import { createClient } from 'entity-registry/client'
import { createTransformersEmbedder, createWordVectorEmbedder, type Embedder, type TransformersEmbedderOptions } from 'entity-registry/embedders'
import { createMemorySearchIndex, createMemoryStore } from 'entity-registry/memory'
import { serve } from 'entity-registry/node'

for (const entry of [${SUBPATHS.map((_, index) => `entry${index}`).join(', ')}]) if (Object.keys(entry).length === 0) throw new Error('an empty entry')
const store = createMemoryStore()
const embedder = createWordVectorEmbedder()
const index = createMemorySearchIndex()
await store.warehouse.upsert({ id: 'p1', type: 'person', name: 'Ada Lovelace', title: 'Mathematician' })
await createIndexer({ store, index, embedder }).catchUp()
const registry = createRegistry({ store, auth: createApiKeyAuthenticator({ keys: ['k'] }), search: createSearch(store, { index, embedder }) })
const server = await serve(registry, { port: 0 })
const client = createClient({ baseUrl: server.url, apiKey: 'k' })
const found = await client.search('mathematician')
// transformers.js 3.0 reads a model under env.localModelPath: the embedder points it at the model, then puts it back.
const modelOptions: TransformersEmbedderOptions = { modelPath: ${JSON.stringify(model)}, pooling: 'mean', dtype: 'fp32' }
const transformers: Embedder = createTransformersEmbedder(modelOptions)
const transformersPackage = '@huggingface/transformers'
const { env } = await import(transformersPackage)
const localModelPath = env.localModelPath
const [vector] = await transformers.embed(['the piano composers of London'])
const embedded = { id: transformers.id, version: env.version, size: vector!.length, norm: Number(Math.hypot(...vector!).toFixed(5)), localModelPathKept: env.localModelPath === localModelPath }
console.log(JSON.stringify({ name: (await client.get('p1')).attributes.name, found: found.map((entity) => entity.id), embedded }))
await server.close()
`,
    )
    const tsc = (module: string, resolution: string) =>
      execFileSync('npx', ['tsc', '--strict', '--noEmit', '--target', 'es2022', '--module', module, '--moduleResolution', resolution, 'check.ts'], { cwd: consumer, encoding: 'utf8' })
    expect(tsc('nodenext', 'nodenext')).toBe('')
    expect(tsc('esnext', 'bundler')).toBe('')
    execFileSync('npx', ['tsc', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', 'check.ts'], { cwd: consumer })
    expect(JSON.parse(execFileSync('node', ['check.js'], { cwd: consumer, encoding: 'utf8' }))).toEqual({
      name: 'Ada Lovelace',
      found: ['p1'],
      embedded: { id: 'transformers:tiny@8:mean:fp32', version: '3.0.2', size: 8, norm: 1, localModelPathKept: true },
    })
  }, 180_000)

  /** `npx entity-registry serve --demo` in the consumer; its URL once it listens. */
  async function serveDemo(args: string[]): Promise<string> {
    const server = spawn('npx', ['entity-registry', 'serve', '--demo', '--port', '0', '--api-key', 'k', ...args], { cwd: consumer, stdio: ['ignore', 'pipe', 'inherit'], detached: true })
    servers.push(server)
    return new Promise<string>((resolve, reject) => {
      server.once('exit', (code) => reject(new Error(`serve exited with ${code}`)))
      createInterface({ input: server.stdout! }).on('line', (line) => {
        const match = /^listening on (\S+)$/.exec(line)
        if (match) resolve(match[1]!)
      })
    })
  }

  /** The ids a search finds, once the index has been built from the demo data. */
  async function searchOnceBuilt(url: string, q: string): Promise<string[]> {
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
      const response = await fetch(`${url}/v1/search?q=${encodeURIComponent(q)}`, { headers: { Authorization: 'Bearer k' } })
      if (response.status === 200) {
        const hits = ((await response.json()) as { data: { id: string }[] }).data.map((entity) => entity.id)
        if (hits.length > 0) return hits
      }
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    return []
  }

  it('serves the demo with npx entity-registry serve --demo, search and the explorer included', async () => {
    const url = await serveDemo(['--data', join(work, 'data')])
    const get = async (path: string) => (await fetch(`${url}${path}`, { headers: { Authorization: 'Bearer k' } })).json() as Promise<{ data: { id: string }[] }>
    expect((await get('/v1/entities?filter=type:legislation')).data).toHaveLength(19)
    // No word of "farming" is in the demo data: the agriculture committees are found by meaning.
    expect((await searchOnceBuilt(url, 'farming')).slice(0, 5)).toEqual(expect.arrayContaining(['cmtehsag', 'cmtessaf']))
    expect(existsSync(join(work, 'data', 'search'))).toBe(true)
    // The explorer's page and its script come built in the package.
    const page = await (await fetch(`${url}/explore`)).text()
    const script = await fetch(`${url}${/<script type="module" src="([^"]+)">/.exec(page)![1]!}`)
    expect([script.status, script.headers.get('Content-Type')]).toEqual([200, 'text/javascript; charset=utf-8'])
  }, 60_000)

  it('searches by meaning inside PGlite with pgvector (serve --database pglite:DIR --search postgres), with no index on disk', async () => {
    const data = join(work, 'pglite-data')
    const url = await serveDemo(['--data', data, '--database', `pglite:${join(data, 'db')}`, '--search', 'postgres'])
    expect((await searchOnceBuilt(url, 'farming')).slice(0, 5)).toEqual(expect.arrayContaining(['cmtehsag', 'cmtessaf']))
    expect(existsSync(join(data, 'search'))).toBe(false)
  }, 120_000)
})
