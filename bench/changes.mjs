// Issue: over 2,000,000 changes of which 0.1% match, every changes request answers in under 20 ms,
// and tailing the whole feed from the start reaches the head.
import { get as httpGet } from 'node:http'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { applyInBatches, benchRegistry, cachedSqliteStore, DATA_DIR, KEY, ms, ROOT, startServer, time } from './lib.mjs'

/**
 * Milliseconds a just-started `entity-registry serve` over the same file takes to answer its first
 * request (as a user gets it: over HTTP, statements not yet prepared, code not yet optimized).
 */
async function firstRequestOfAServer(path) {
  const args = [join(ROOT, 'dist/cli/main.js'), 'serve', '--database', join(DATA_DIR, 'changes-2m.sqlite'), '--data', mkdtempSync(join(tmpdir(), 'er-first-')), '--api-key', KEY, '--search', 'none', '--port', '0']
  const server = await startServer(process.execPath, args)
  const started = performance.now()
  const status = await new Promise((resolve, reject) =>
    httpGet(server.url + path, { headers: { Authorization: `Bearer ${KEY}` } }, (response) => response.resume().on('end', () => resolve(response.statusCode))).on('error', reject),
  )
  const elapsed = performance.now() - started
  server.stop()
  if (status !== 200) throw new Error(`first request: status ${status}`)
  return elapsed
}

const TOTAL = 2_000_000
const ENTITIES = 200_000
const MATCH_EVERY = 1000 // 0.1% of the changes carry jurisdiction US-ZZ

const store = await cachedSqliteStore('changes-2m', (store) =>
  applyInBatches(store.warehouse, TOTAL, (n) => ({
    op: 'upsert',
    record: {
      id: `c${(n % ENTITIES).toString(36).padStart(4, '0')}`,
      type: 'legislation',
      title: `Bill ${n % ENTITIES}, version ${Math.floor(n / ENTITIES)}`,
      jurisdiction: n % MATCH_EVERY === 0 ? 'US-ZZ' : 'US-WA',
      status: 'introduced',
    },
  })),
)
const get = benchRegistry(store)
const filter = 'filter=jurisdiction:US-ZZ'

// Tail the whole feed from the start, timing every request.
const samples = []
let next = `/v1/entities/changes?${filter}&page[limit]=100`
let matches = 0
let cursor = null
let requests = 0
const head = (await get('/v1/entities?page[limit]=1')).headers.get('change-feed-head')
while (next) {
  const started = performance.now()
  const response = await get(next.replace('http://bench.local', ''))
  const document = await response.json()
  samples.push(performance.now() - started)
  matches += document.data.length
  cursor = document.meta.cursor
  next = document.links.next
  requests++
}
const first = await firstRequestOfAServer(`/v1/entities/changes?${filter}&page[limit]=100`)
samples.sort((a, b) => a - b)
console.log(`\nchange feed over ${TOTAL.toLocaleString('en')} changes, ${(100 / MATCH_EVERY).toFixed(1)}% matching (window 10,000)`)
console.log(`tail from the start: ${requests} requests, ${matches} matches, reached the head: ${cursor === head}`)
console.log(`the first request of a fresh \`entity-registry serve\` over HTTP: ${ms(first)}`)
console.log('| request | p50 | p95 | max | p50 / baseline |')
console.log('|---|---|---|---|---|')
const baseline = await time(200, () => get('/v1/entities?page[limit]=100'))
const tail = { p50: samples[Math.floor(samples.length / 2)], p95: samples[Math.floor(samples.length * 0.95)], max: samples.at(-1) }
const noMatch = await time(200, () => get(`/v1/entities/changes?filter=jurisdiction:US-XX&page[limit]=100`))
const everything = await time(200, () => get(`/v1/entities/changes?filter=type:legislation&page[limit]=100`))
for (const [name, r] of [
  ['baseline: first unfiltered entity page', baseline],
  ['tailing jurisdiction:US-ZZ (each request of the tail)', tail],
  ['a window with no match (jurisdiction:US-XX)', noMatch],
  ['every change matches (type:legislation), 100 a page', everything],
]) {
  console.log(`| ${name} | ${ms(r.p50)} | ${ms(r.p95)} | ${ms(r.max)} | ${(r.p50 / baseline.p50).toFixed(2)} |`)
}
const worst = Math.max(tail.max, noMatch.max, everything.max, first)
console.log(`\ntarget (every request under 20 ms): slowest ${ms(worst)}: ${worst < 20 && cursor === head && matches === TOTAL / MATCH_EVERY ? 'met' : 'NOT met'}`)
await store.close()
