// What each way to run the registry costs per request, over HTTP, as a client sees it: the CLI on
// Node (node:http), Bun (Bun.serve) and Deno (Deno.serve), a Hattip handler on Hattip's Node adapter,
// and the Next.js example (when `examples/nextjs` is installed), each serving the demo data. The floor
// is a hand-written node:http server answering the same bytes from memory: no routing, no store.
// Load: autocannon in this process, 10 connections, 5 s a request kind; the server has the other core.
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { machine, ROOT as root, startServer as start } from './lib.mjs'

const cli = join(root, 'dist/cli/main.js')
const bin = (name) => join(root, 'node_modules/.bin', name)
const KEY = 'bench-key'
const REQUESTS = { 'list, 25 a page': '/v1/entities?page[limit]=25', 'one entity': '/v1/entities/a000039' }
const serve = (data) => ['serve', '--demo', '--data', data, '--port', '0', '--api-key', KEY, '--rate-limit', '0']
const env = (data) => ({ PORT: '0', DATA_DIR: data, ENTITY_REGISTRY_API_KEYS: KEY, RATE_LIMIT: '0' })

const servers = [
  ['Node (node:http)', '', (data) => start(process.execPath, [cli, ...serve(data)])],
  ['Bun (Bun.serve)', '', (data) => start(bin('bun'), [cli, ...serve(data)])],
  ['Deno (Deno.serve)', '', (data) => start(bin('deno'), ['run', '--allow-all', cli, ...serve(data)])],
  ['Hattip (adapter-node)', '', (data) => start(process.execPath, [join(root, 'test/runtimes/hattip-server.mjs')], { env: env(data) })],
]
const nextExample = join(root, 'examples/nextjs')
if (existsSync(join(nextExample, '.next/BUILD_ID'))) {
  servers.push(['Next.js (next start)', '/api/registry', (data) => start('npm', ['start'], { cwd: nextExample, env: env(data) })])
} else {
  console.log('Next.js skipped: run `npm install && npm run build` in examples/nextjs first')
}

async function load(url) {
  const result = await autocannon({ url, connections: 10, duration: 5, headers: { Authorization: `Bearer ${KEY}` } })
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`)
  return { rate: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 }
}

console.log(`machine: ${machine()}`)
const rows = []
const floorBodies = {}
for (const [name, basePath, open] of servers) {
  const data = mkdtempSync(join(tmpdir(), 'er-bench-runtime-'))
  const server = await open(data)
  // Let the search indexer catch up with the demo data first: it shares the server's core.
  await new Promise((resolve) => setTimeout(resolve, 3000))
  for (const [kind, path] of Object.entries(REQUESTS)) {
    const url = `${server.url}${basePath}${path}`
    if (!(kind in floorBodies)) {
      const response = await fetch(url, { headers: { Authorization: `Bearer ${KEY}` } })
      floorBodies[kind] = { body: Buffer.from(await response.arrayBuffer()), type: response.headers.get('content-type') }
    }
    await load(url) // warm-up
    rows.push({ name, kind, ...(await load(url)) })
  }
  server.stop()
  rmSync(data, { recursive: true, force: true })
}

const floor = createServer((request, response) => {
  const { body, type } = Object.values(floorBodies).find((_, index) => Object.values(REQUESTS)[index] === request.url) ?? floorBodies['one entity']
  response.writeHead(200, { 'Content-Type': type, 'Content-Length': body.length }).end(body)
})
await new Promise((resolve) => floor.listen(0, '127.0.0.1', resolve))
const floorRates = {}
for (const [kind, path] of Object.entries(REQUESTS)) {
  const url = `http://127.0.0.1:${floor.address().port}${path}`
  await load(url)
  floorRates[kind] = await load(url)
  rows.unshift({ name: 'floor: node:http, fixed bytes', kind, ...floorRates[kind] })
}
floor.close()

console.log('\n| server | request | req/s | p50 | p99 | req/s / floor |\n|---|---|---|---|---|---|')
for (const row of rows) {
  console.log(`| ${row.name} | ${row.kind} | ${Math.round(row.rate)} | ${row.p50} ms | ${row.p99} ms | ${(row.rate / floorRates[row.kind].rate).toFixed(2)} |`)
}
