// Soak: `entity-registry serve` under mixed traffic from 10 clients (lists, filtered lists, gets,
// search, the change feed, rendition downloads) for N minutes, with an import of changed records
// every 30 s by a separate `entity-registry import` process, as a warehouse's updates arrive.
// Each minute: requests, errors (no answer, or 5xx), p50 and p99, the server's resident memory.
// Pass when there are no errors, the last minute's memory is within 10% of the second's, and p99 is stable.
//   node bench/soak.mjs [--database sqlite|postgres] [--minutes 10] [--postgres postgres://postgres@127.0.0.1:5432/postgres]
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { client, KEY, machine, quantile, recordOf, ROOT, startServer } from './lib.mjs'

const { values: options } = parseArgs({
  options: {
    database: { type: 'string', default: 'sqlite' },
    minutes: { type: 'string', default: '10' },
    postgres: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
    'import-every': { type: 'string', default: '30' },
    'import-size': { type: 'string', default: '500' },
  },
})
const minutes = Number(options.minutes)
const importSize = Number(options['import-size'])
const cli = join(ROOT, 'dist/cli/main.js')
const data = mkdtempSync(join(tmpdir(), 'er-soak-'))

// A database of its own on the PostgreSQL server, dropped at the end.
let database = []
let dropDatabase = async () => {}
if (options.database === 'postgres') {
  const name = `er_soak_${process.pid}`
  const admin = new pg.Client({ connectionString: options.postgres })
  await admin.connect()
  await admin.query(`create database ${name}`)
  await admin.end()
  const url = new URL(options.postgres)
  url.pathname = `/${name}`
  database = ['--database', url.href]
  dropDatabase = async () => {
    const client = new pg.Client({ connectionString: options.postgres })
    await client.connect()
    await client.query(`drop database if exists ${name} with (force)`)
    await client.end()
  }
}

const server = await startServer(process.execPath, [cli, 'serve', '--data', data, ...database, '--demo', '--api-key', KEY, '--rate-limit', '0', '--port', '0', '--log', 'warn'])
const { url } = server
const auth = { Authorization: `Bearer ${KEY}` }
const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))[1]) / 1024

// Counted from when search answers: the index is built from the feed after start.
while ((await fetch(`${url}/v1/search?q=senator`, { headers: auth })).status !== 200) await new Promise((resolve) => setTimeout(resolve, 250))

// Rendition addresses, from the demo's bills.
const bills = await (await fetch(`${url}/v1/entities?filter=type:legislation`, { headers: auth })).json()
const downloads = bills.data.flatMap((entity) => (entity.attributes.texts ?? []).flatMap((text) => text.renditions.map((rendition) => new URL(rendition.links.content).pathname)))
if (downloads.length === 0) throw new Error('no renditions found in the demo data')

let round = 0
/** The next import: `importSize` synthetic records whose titles say the round, so each one changes them. */
function importFile() {
  round++
  const file = join(data, 'update.ndjson')
  const lines = []
  for (let n = 0; n < importSize; n++) lines.push(JSON.stringify({ ...recordOf(n), title: `record ${n}, round ${round}` }))
  writeFileSync(file, `${lines.join('\n')}\n`)
  return file
}

const paths = [
  () => '/v1/entities?page[limit]=100',
  () => '/v1/entities?filter=type:person%20jurisdiction:US-WA',
  () => `/v1/entities/e${Math.floor(Math.random() * importSize).toString(36).padStart(5, '0')}`,
  () => '/v1/entities/s1113',
  () => `/v1/search?q=${['immigration', 'senator from Washington', 'health care', 'Lincoln'][Math.floor(Math.random() * 4)]}`,
  () => '/v1/entities/changes?filter=type:legislation',
  () => downloads[Math.floor(Math.random() * downloads.length)],
]

/** Per minute: latencies, errors by kind, memory. */
const minutesSeen = Array.from({ length: minutes }, () => ({ latencies: [], errors: new Map(), rss: 0 }))
const started = Date.now()
const minuteNow = () => Math.floor((Date.now() - started) / 60_000)
const ends = started + minutes * 60_000

/** Counts a request in the minute it ended (none past the last minute). */
function record(latency, failure) {
  const minute = minutesSeen[minuteNow()]
  if (!minute) return
  minute.latencies.push(latency)
  if (failure) minute.errors.set(failure, (minute.errors.get(failure) ?? 0) + 1)
}

const imports = []
const importer = setInterval(() => {
  const at = Date.now()
  const result = spawnSync(process.execPath, [cli, 'import', importFile(), '--data', data, ...database], { encoding: 'utf8' })
  imports.push({ seconds: (Date.now() - at) / 1000, code: result.status, out: result.stdout.trim() })
}, Number(options['import-every']) * 1000)
const sampler = setInterval(() => {
  const minute = minutesSeen[minuteNow()]
  if (minute) minute.rss = Math.max(minute.rss, rss())
}, 5000)

await Promise.all(Array.from({ length: 10 }, (_, index) => client(url, paths, { first: index, going: () => Date.now() < ends, record })))
clearInterval(importer)
clearInterval(sampler)
server.stop()
await dropDatabase()

console.log(`machine: ${machine()}; store: ${options.database}; ${minutes} min, 10 clients, an import of ${importSize} changed records every ${options['import-every']} s`)
console.log('| minute | requests | errors | p50 ms | p99 ms | RSS MB |')
console.log('|---|---|---|---|---|---|')
let errors = 0
for (const [index, minute] of minutesSeen.entries()) {
  const sorted = minute.latencies.sort((a, b) => a - b)
  const count = [...minute.errors.values()].reduce((a, b) => a + b, 0)
  errors += count
  console.log(`| ${index + 1} | ${sorted.length} | ${count}${count ? ` (${[...minute.errors].map(([kind, n]) => `${kind}: ${n}`).join(', ')})` : ''} | ${quantile(sorted, 0.5).toFixed(1)} | ${quantile(sorted, 0.99).toFixed(1)} | ${minute.rss.toFixed(0)} |`)
}
const failedImports = imports.filter((entry) => entry.code !== 0)
console.log(`imports: ${imports.length}, failed ${failedImports.length}, slowest ${Math.max(...imports.map((entry) => entry.seconds)).toFixed(1)} s`)
const second = minutesSeen[1]?.rss ?? 0
const last = minutesSeen.at(-1).rss
console.log(`errors: ${errors}; memory: last minute ${last.toFixed(0)} MB against the second's ${second.toFixed(0)} MB (${(((last - second) / second) * 100).toFixed(1)}%)`)
