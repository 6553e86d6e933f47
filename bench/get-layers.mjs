// What a get by id costs over HTTP, layer by layer: servers that each add one layer to the one
// before, every one in its own process over the data set of http.mjs, loaded in turn by autocannon
// (10 connections, 1 s of warm-up, then --duration s); CPU / request is the server process's (/proc).
// Round by round, so that a machine busy with other work shows as rounds that disagree.
//   node bench/get-layers.mjs [--entities 300000] [--duration 3] [--rounds 2]
// Needs the data set of http.mjs (bench/.data/http-<entities>; `node bench/http.mjs --only get` builds it).
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createServer } from 'node:http'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { DATA_DIR, idOf, KEY, machine, processCpuMicros } from './lib.mjs'

const LAYERS = {
  'the document, 2 headers (as the floor writes it)': 'fixed',
  "the document, the registry's 9 headers as an object": 'headers-object',
  "the document, the registry's 9 headers as a flat list": 'headers-list',
  "and the registry's SQL statement (better-sqlite3)": 'statement',
  'registry.answer over a store answering from memory': 'registry-memory',
  'registry.answer over the SQLite store': 'registry',
  'entity-registry serve (the Node adapter)': 'serve',
}

const { values: options, positionals } = parseArgs({
  allowPositionals: true,
  options: { entities: { type: 'string', default: '300000' }, duration: { type: 'string', default: '3' }, rounds: { type: 'string', default: '2' } },
})
const total = Number(options.entities)
const file = join(DATA_DIR, `http-${total}`, 'registry.sqlite')
const id = idOf(123_456 % total)

if (positionals[0] === 'server') await runServer(positionals[1])
else await measure()

/** One layer's server; prints its port. */
async function runServer(layer) {
  const { createRegistry, createApiKeyAuthenticator, createTokenBucketRateLimiter } = await import('../dist/index.js')
  const { createSqliteStore } = await import('../dist/kysely/index.js')
  const { serve } = await import('../dist/node/index.js')
  const { default: Database } = await import('better-sqlite3')
  const store = await createSqliteStore({ file })
  const entity = await store.getEntity(id)
  const served = layer === 'registry-memory' ? { ...store, getEntity: async () => entity } : store
  // A limit no run reaches, as `serve` has in http.mjs.
  const registry = createRegistry({ store: served, auth: createApiKeyAuthenticator({ keys: [KEY] }), rateLimit: createTokenBucketRateLimiter({ limit: 1e9 }) })
  const viewOf = (req) => ({ method: req.method, url: `http://${req.headers.host}${req.url}`, headers: { get: (name) => req.headers[name.toLowerCase()] ?? null } })
  const sample = await registry.answer(viewOf({ method: 'GET', url: `/v1/entities/${id}`, headers: { host: 'localhost', authorization: `Bearer ${KEY}` } }))
  const document = sample.body
  const headers = { ...sample.headers }
  delete headers['X-Request-Id']
  const statement = new Database(file, { readonly: true }).prepare('select "id", "state", "merged_into", "snapshot", "resource" from "entities" where "id" = ?')
  const headerList = () => [...Object.entries(headers).flat(), 'X-Request-Id', crypto.randomUUID(), 'Content-Length', String(Buffer.byteLength(document))]
  const write = {
    fixed: (res) => res.writeHead(200, { 'Content-Type': headers['Content-Type'], 'Content-Length': Buffer.byteLength(document) }).end(document),
    'headers-object': (res) => res.writeHead(200, { ...headers, 'X-Request-Id': crypto.randomUUID(), 'Content-Length': Buffer.byteLength(document) }).end(document),
    'headers-list': (res) => res.writeHead(200, headerList()).end(document),
    statement: (res, req) => {
      statement.all([req.url.slice('/v1/entities/'.length)])
      res.writeHead(200, headerList()).end(document)
    },
  }
  const answered = (req, res) =>
    registry.answer(viewOf(req), { address: req.socket.remoteAddress }).then((answer) => {
      res.writeHead(answer.status, [...Object.entries(answer.headers).flat(), 'Content-Length', String(Buffer.byteLength(answer.body))]).end(answer.body)
    })
  const server = layer === 'serve' ? (await serve(registry, { port: 0 })).server : createServer(write[layer] === undefined ? answered : (req, res) => write[layer](res, req)).listen(0, '127.0.0.1')
  await new Promise((resolve) => (server.listening ? resolve() : server.once('listening', resolve)))
  console.log(server.address().port)
}

async function measure() {
  if (!existsSync(file)) throw new Error(`no ${file}: run node bench/http.mjs --only get --entities ${total} first`)
  const rows = new Map(Object.keys(LAYERS).map((name) => [name, []]))
  for (let round = 0; round < Number(options.rounds); round++) {
    for (const [name, layer] of Object.entries(LAYERS)) {
      const child = spawn(process.execPath, [process.argv[1], 'server', layer, '--entities', String(total)], { stdio: ['ignore', 'pipe', 'inherit'] })
      const port = await new Promise((resolve) => child.stdout.once('data', (data) => resolve(String(data).trim())))
      const load = { url: `http://127.0.0.1:${port}/v1/entities/${id}`, connections: 10, headers: { Authorization: `Bearer ${KEY}` } }
      await autocannon({ ...load, duration: 1 })
      const before = processCpuMicros(child.pid)
      const result = await autocannon({ ...load, duration: Number(options.duration) })
      const cpu = (processCpuMicros(child.pid) - before) / result.requests.total
      child.kill()
      if (result.non2xx > 0 || result.errors > 0) throw new Error(`${name}: ${result.non2xx} answers not 2xx, ${result.errors} errors`)
      rows.get(name).push(`${Math.round(result.requests.average).toLocaleString('en-US')}/s, ${Math.round(cpu)} us`)
    }
  }
  console.log(`${machine()}; GET /v1/entities/${id}, autocannon 10 connections, ${options.rounds} rounds of ${options.duration} s\n`)
  console.log('| server | req/s, CPU / request, each round |\n|---|---|')
  for (const [name, cells] of rows) console.log(`| ${name} | ${cells.join('; ')} |`)
}
