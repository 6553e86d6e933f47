// The search indexer under read load: how many of the feed's changes `serve` indexes a second with
// no readers, and while 8 HTTP clients read (each sending, in turn, a list page, a get, a search and
// a feed page, as soon as the last is answered). The embedded defaults, as a user runs them: SQLite,
// LanceDB under the data directory, the bundled word vectors. Each run starts `serve` on a copy of a
// data directory that holds the demo data, already indexed, and runs `entity-registry import` of N
// new records (people and bills) while the server runs; the admin port's /metrics, read every 100 ms,
// tells the feed head and the index's lag (so what it has indexed: head - lag). Measured: from the
// import's end until the index has caught up (the indexer working through a backlog at full speed),
// and from the import's start until all N are searchable. The configurations alternate.
//   node bench/indexer-under-load.mjs [--records 20000] [--runs 2] [--readers 8]   (after npm run build)
import { spawn } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { client, FIRST_NAMES, idOf, KEY, machine, quantile, recordOf, ROOT, startServer, surnameOf, WORDS } from './lib.mjs'

const { values: options } = parseArgs({
  options: {
    records: { type: 'string', default: '20000' },
    runs: { type: 'string', default: '2' },
    readers: { type: 'string', default: '8' },
  },
})
const records = Number(options.records)
const readers = Number(options.readers)
const cli = join(ROOT, 'dist/cli/main.js')
const work = mkdtempSync(join(tmpdir(), 'er-indexer-load-'))
const load = () => loadavg().map((value) => value.toFixed(1)).join(' ')

// The records: 60% people (a name, a seat), 40% bills (a title of common words), all new ids.
let seed = 7
const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647
const pick = (items) => items[Math.floor(random() * items.length)]
const capitalized = (word) => word[0].toUpperCase() + word.slice(1)
function recordAt(n) {
  const { id, jurisdiction, displayDate, status } = recordOf(n)
  const common = { id, jurisdiction, displayDate, status, texts: [] }
  if (n % 5 < 3) {
    const seat = n % 2 === 0 ? `Senator for ${jurisdiction.slice(3)}` : `Representative for ${jurisdiction.slice(3)}, district ${1 + (n % 19)}`
    return { ...common, type: 'person', name: `${capitalized(pick(FIRST_NAMES))} ${capitalized(surnameOf(n))}`, title: seat, localType: 'bioguide' }
  }
  const words = Array.from({ length: 5 + Math.floor(random() * 5) }, () => pick(WORDS))
  return { ...common, type: 'legislation', title: `A bill to improve ${words.join(' ')}`, localType: 'bill' }
}
const recordsFile = join(work, 'records.ndjson')
writeFileSync(recordsFile, `${Array.from({ length: records }, (_, n) => JSON.stringify(recordAt(n))).join('\n')}\n`)

const run = (args) =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { stdio: ['ignore', 'ignore', 'inherit'] })
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${args.join(' ')} exited with ${code}`))))
  })
const serve = (data) => startServer(process.execPath, [cli, 'serve', '--data', data, '--api-key', KEY, '--rate-limit', '0', '--port', '0', '--admin-port', '0', '--log', 'warn'])
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** What the admin port says now: the feed head, and the changes the search index has not applied. */
async function position(admin) {
  const text = await (await fetch(`${admin}/metrics`)).text()
  const gauge = (name) => Number(new RegExp(`^entity_registry_${name} (\\d+)$`, 'm').exec(text)?.[1] ?? Number.NaN)
  return { at: performance.now(), head: gauge('feed_head'), lag: gauge('search_index_lag_changes') }
}
/** Waits for search to answer from an index that lacks no change (the metrics read 0 lag before the index opens). */
async function searchCurrent(url) {
  for (;;) {
    const response = await fetch(`${url}/v1/search?q=senator`, { headers: { Authorization: `Bearer ${KEY}` } })
    await response.arrayBuffer()
    if (response.status === 200 && response.headers.get('search-index-lag') === '0') return
    await sleep(100)
  }
}

// The template: the demo data imported and indexed (a first `serve` builds the index), copied for each run.
const template = join(work, 'template')
await run(['import', join(ROOT, 'demo/entities.jsonl'), '--data', template, '--progress', 'none'])
const first = await serve(template)
await searchCurrent(first.url)
first.stop()
await sleep(1000)

const demoIds = readFileSync(join(ROOT, 'demo/entities.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line).id)
const queries = ['health care', 'senator from Washington', 'immigration', 'Lincoln', 'tax relief for small business', 'veteran housing']
const paths = [
  () => '/v1/entities?page[limit]=100',
  () => `/v1/entities/${pick(demoIds)}`,
  () => `/v1/search?q=${encodeURIComponent(pick(queries))}`,
  () => '/v1/entities/changes?page[limit]=100',
]

const kindOf = (path) => (path.startsWith('/v1/search') ? 'search' : path.startsWith('/v1/entities/changes') ? 'feed page' : path.startsWith('/v1/entities?') ? 'list page' : 'get')
/** The readers' requests of one window: latencies by kind, failures by kind of failure. */
const window = () => ({ latencies: new Map(), failures: new Map(), seconds: 0 })
const requestsOf = (counted) => [...counted.latencies.values()].flat().sort((a, b) => a - b)
const failedOf = (counted) => [...counted.failures.values()].reduce((a, b) => a + b, 0)

/**
 * One run: `serve` on a fresh copy of the template; with readers, 2 s of warm-up and 3 s of reading
 * alone (the readers' figures without indexing); then one import of the records, until the index has
 * caught up.
 */
async function measure(readerCount, index) {
  const data = join(work, `run-${index}`)
  cpSync(template, data, { recursive: true })
  const server = await serve(data)
  await searchCurrent(server.url)
  const base = await position(server.admin)
  if (base.lag !== 0) throw new Error(`the index is ${base.lag} changes behind before the import`)

  let reading = true
  let counted = null
  const record = (latency, failure, path) => {
    if (!counted) return
    const kind = kindOf(path)
    counted.latencies.set(kind, [...(counted.latencies.get(kind) ?? []), latency])
    if (failure) counted.failures.set(failure, (counted.failures.get(failure) ?? 0) + 1)
  }
  const clients = Array.from({ length: readerCount }, (_, reader) => client(server.url, paths, { first: reader, going: () => reading, record }))
  const alone = window()
  if (readerCount > 0) {
    await sleep(2000)
    counted = alone
    await sleep(3000)
    alone.seconds = 3
  }

  const loadBefore = load()
  const indexing = window()
  counted = indexing
  const started = performance.now()
  let importEnded = null
  const importing = run(['import', recordsFile, '--data', data, '--progress', 'none']).then(() => (importEnded = performance.now()))
  const samples = []
  for (;;) {
    const now = await position(server.admin)
    samples.push(now)
    if (importEnded !== null && now.head - base.head >= records && now.lag === 0) break
    await sleep(100)
  }
  await importing
  counted = null
  reading = false
  await Promise.all(clients)
  server.stop()
  const end = samples.at(-1)
  if (end.head - base.head !== records) throw new Error(`the feed grew by ${end.head - base.head}, not ${records}`)
  indexing.seconds = (end.at - started) / 1000

  // A reading taken while the index rewrites its state (cursor gone) says the whole feed is behind:
  // counted, and left out. The backlog: from the first other reading after the import ended.
  const readings = samples.filter((sample) => sample.head - sample.lag >= base.head)
  const atImportEnd = readings.find((sample) => sample.at >= importEnded)
  const indexedAtImportEnd = atImportEnd.head - atImportEnd.lag - base.head
  await sleep(1000) // the server's shutdown, before the next run
  return {
    readers: readerCount,
    importSeconds: (importEnded - started) / 1000,
    indexedAtImportEnd,
    backlogRate: (records - indexedAtImportEnd) / ((end.at - atImportEnd.at) / 1000),
    seconds: indexing.seconds,
    overallRate: records / indexing.seconds,
    readings: samples.length,
    wholeFeedBehind: samples.length - readings.length,
    alone,
    indexing,
    load: `${loadBefore} / ${load()}`,
  }
}

console.log(`machine: ${machine()}; load average (1, 5, 15 min) at start: ${load()}`)
console.log(`${records} new records (60% people, 40% bills) imported into serve --data (SQLite, LanceDB, words) over the demo's ${demoIds.length}; readers: 0 and ${readers}, alternating, ${options.runs} runs each`)
const results = []
for (let round = 0; round < Number(options.runs); round++) {
  for (const readerCount of [0, readers]) {
    const result = await measure(readerCount, results.length)
    results.push(result)
    console.log(`  run ${results.length}: ${readerCount} readers, indexed ${result.backlogRate.toFixed(0)}/s after the import`)
  }
}
rmSync(work, { recursive: true, force: true })

const int = (value) => Math.round(value).toLocaleString('en-US')
const reads = (counted) => {
  const sorted = requestsOf(counted)
  const failed = failedOf(counted)
  const kinds = failed ? ` (${[...counted.failures].map(([kind, n]) => `${kind}: ${n}`).join(', ')})` : ''
  return `${int(sorted.length / counted.seconds)} | ${quantile(sorted, 0.5).toFixed(1)} | ${quantile(sorted, 0.99).toFixed(1)} | ${failed}${kinds}`
}
console.log('| run | readers | import s | indexed by its end | backlog: changes/s | import start to all searchable: s | changes/s | reads/s | p50 ms | p99 ms | failed | reading alone: reads/s | p50 ms | p99 ms | load average before / after |')
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|')
for (const [position, result] of results.entries()) {
  const during = result.readers === 0 ? '– | – | – | –' : reads(result.indexing)
  const before = result.readers === 0 ? '– | – | –' : reads(result.alone).replace(/ \| [^|]*$/, '')
  console.log(
    `| ${position + 1} | ${result.readers} | ${result.importSeconds.toFixed(1)} | ${int(result.indexedAtImportEnd)} | ${int(result.backlogRate)} | ${result.seconds.toFixed(1)} | ${int(result.overallRate)} | ${during} | ${before} | ${result.load} |`,
  )
}
const mean = (readerCount, key) => {
  const chosen = results.filter((result) => result.readers === readerCount)
  return chosen.reduce((sum, result) => sum + result[key], 0) / chosen.length
}
console.log(
  `with ${readers} readers against none: backlog rate ${(mean(readers, 'backlogRate') / mean(0, 'backlogRate')).toFixed(2)}x, import start to all searchable ${(mean(readers, 'overallRate') / mean(0, 'overallRate')).toFixed(2)}x (rates, means of the runs)`,
)

// By kind, all runs with readers together: alone, and while indexing.
const withReaders = results.filter((result) => result.readers > 0)
console.log('| request | alone: p50 ms | p99 ms | while indexing: p50 ms | p99 ms |')
console.log('|---|---|---|---|---|')
for (const kind of ['list page', 'get', 'search', 'feed page']) {
  const of = (key) => withReaders.flatMap((result) => result[key].latencies.get(kind) ?? []).sort((a, b) => a - b)
  const [alone, during] = [of('alone'), of('indexing')]
  console.log(`| ${kind} | ${quantile(alone, 0.5).toFixed(1)} | ${quantile(alone, 0.99).toFixed(1)} | ${quantile(during, 0.5).toFixed(1)} | ${quantile(during, 0.99).toFixed(1)} |`)
}
const wrong = results.reduce((sum, result) => sum + result.wholeFeedBehind, 0)
console.log(`lag readings that said the whole feed was behind (the index's state read while rewritten): ${wrong} of ${results.reduce((sum, result) => sum + result.readings, 0)} (${results.map((result) => result.wholeFeedBehind).join(', ')} by run)`)
const failedAlone = withReaders.reduce((sum, result) => sum + failedOf(result.alone), 0)
if (failedAlone > 0) console.log(`failed while reading alone: ${failedAlone}`)
