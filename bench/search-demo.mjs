// Search over the demo data as a user of `npm run demo` meets it: `serve --demo` (the index in
// memory in front of LanceDB, the bills' texts indexed) over HTTP, one search at a time, the queries
// of test/search/relevance-set.json (123) in turn, the first round to warm up and then `--rounds`
// measured: latency p50 / p90 / p99, and the server's CPU a search (user and system time of its
// process, LanceDB's threads included); beside it, in turn round by round, search-cost.mjs's floor
// (`servers/search-floor.mjs`: node:http over an FTS5 table of the demo's titles and names, the
// lexical half of each query), and the ratio of the registry's p50 and CPU to the floor's. `--dist
// DIR` runs another build too (a checkout's dist/, for a before and after in one sitting).
//   node bench/search-demo.mjs [--rounds 4] [--dist DIR]
// after `npm run build`.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { KEY, machine, processCpuMicros, quantile, ROOT, startServer, writeSearchFloor } from './lib.mjs'

const { values: options } = parseArgs({ options: { rounds: { type: 'string', default: '4' }, dist: { type: 'string' } } })
const queries = JSON.parse(readFileSync(join(ROOT, 'test/search/relevance-set.json'), 'utf8')).queries.map((query) => query.q)
const builds = { 'this build': join(ROOT, 'dist'), ...(options.dist ? { [options.dist]: resolve(options.dist) } : {}) }
const loadAverage = () => loadavg().map((load) => load.toFixed(2)).join(', ')

/** `serve --demo` from a build, ready once the demo's feed is indexed. */
async function serveDemo(dist) {
  const data = mkdtempSync(join(tmpdir(), 'er-search-demo-'))
  const server = await startServer(process.execPath, [join(dist, 'cli/main.js'), 'serve', '--demo', '--data', data, '--api-key', KEY, '--log', 'warn', '--port', '0'], {
    readyWhen: /^search index: \d+ changes of the feed indexed/,
  })
  return { ...server, stop: () => (server.stop(), rmSync(data, { recursive: true, force: true })) }
}

/** One round of every query, one at a time: each search's milliseconds, and the server's CPU over the round. */
async function round({ url, pid }) {
  const milliseconds = []
  const cpuBefore = processCpuMicros(pid)
  for (const q of queries) {
    const started = performance.now()
    const response = await fetch(`${url}/v1/search?q=${encodeURIComponent(q)}`, { headers: { authorization: `Bearer ${KEY}` } })
    await response.arrayBuffer()
    if (response.status !== 200) throw new Error(`${q}: ${response.status}`)
    milliseconds.push(performance.now() - started)
  }
  return { milliseconds, cpu: (processCpuMicros(pid) - cpuBefore) / 1000 }
}

/** The floor over the demo's entities, from a file of its own. */
async function serveFloor() {
  const directory = mkdtempSync(join(tmpdir(), 'er-search-demo-floor-'))
  const file = join(directory, 'floor.sqlite')
  const records = readFileSync(join(ROOT, 'demo/entities.jsonl'), 'utf8').split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line))
  writeSearchFloor(file, records)
  const server = await startServer(process.execPath, [join(ROOT, 'bench/servers/search-floor.mjs'), file])
  return { ...server, stop: () => (server.stop(), rmSync(directory, { recursive: true, force: true })) }
}

const FLOOR = 'floor (FTS5)'
const measured = Object.fromEntries([...Object.keys(builds), FLOOR].map((name) => [name, { milliseconds: [], cpu: 0 }]))
const servers = {}
for (const [name, dist] of Object.entries(builds)) servers[name] = await serveDemo(dist)
servers[FLOOR] = await serveFloor()
for (const server of Object.values(servers)) await round(server)
console.log(`${machine()}; load average ${loadAverage()} before`)
for (let at = 0; at < Number(options.rounds); at++) {
  for (const name of Object.keys(measured)) {
    const { milliseconds, cpu } = await round(servers[name])
    measured[name].milliseconds.push(...milliseconds)
    measured[name].cpu += cpu
  }
}
for (const server of Object.values(servers)) server.stop()
console.log(`load average ${loadAverage()} after; ${queries.length} queries, ${options.rounds} rounds measured\n`)
const figures = Object.fromEntries(
  Object.entries(measured).map(([name, { milliseconds, cpu }]) => {
    const sorted = milliseconds.toSorted((a, b) => a - b)
    return [name, { p50: quantile(sorted, 0.5), p90: quantile(sorted, 0.9), p99: quantile(sorted, 0.99), cpu: cpu / milliseconds.length }]
  }),
)
console.log("| server | p50 | p90 | p99 | CPU a search | p50, CPU: times the floor's |\n|---|---|---|---|---|---|")
for (const [name, { p50, p90, p99, cpu }] of Object.entries(figures)) {
  const ratio = name === FLOOR ? '' : `${(p50 / figures[FLOOR].p50).toFixed(1)}, ${(cpu / figures[FLOOR].cpu).toFixed(1)}`
  console.log(`| ${name} | ${p50.toFixed(1)} ms | ${p90.toFixed(1)} ms | ${p99.toFixed(1)} ms | ${cpu.toFixed(2)} ms | ${ratio} |`)
}
