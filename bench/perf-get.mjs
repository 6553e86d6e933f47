// Where a get by id's CPU goes, by Linux `perf` rather than V8's sampler: the floor, the contract peer
// and `entity-registry serve` (as http.mjs starts them), each alone under autocannon (10 connections)
// on the same get by id, sampled by `perf record -e cpu-clock` over the load alone. Every sample of
// every thread of the process, kernel included, goes to a part by the symbol it landed in (PARTS), in
// microseconds a request. V8's sampler (profile-get.mjs) gives a native call that enters the kernel
// (`writev`, better-sqlite3's `all`) two to three times what perf finds there, and leaves the GC
// helper threads and the kernel out of its steps; this is the cross-check (bench/README.md).
// Node runs with --perf-basic-prof, so that compiled JavaScript is named by its function.
//   node bench/perf-get.mjs [--entities 300000] [--duration 5] [--path PATH] [--postgres URL] [--top 25]
// Needs `perf` (Debian: linux-perf) and http.mjs's data set (`node bench/http.mjs --only get` builds it).
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { benchServeArgs, contractPeerArgs, DATA_DIR, floorArgs, httpSchemaOf, idOf, inSchema, KEY, machine, ROOT, startServer } from './lib.mjs'

const { values: options } = parseArgs({
  options: {
    entities: { type: 'string', default: '300000' },
    duration: { type: 'string', default: '5' },
    path: { type: 'string' },
    postgres: { type: 'string' },
    top: { type: 'string', default: '25' },
  },
})
const FREQUENCY = 4999
const total = Number(options.entities)
const data = join(DATA_DIR, `http-${total}${options.postgres === undefined ? '' : '-postgres'}`)
if (!existsSync(data)) throw new Error(`no ${data}: run node bench/http.mjs --only get --entities ${total}${options.postgres === undefined ? '' : ' --postgres URL'} first`)
try {
  execFileSync('perf', ['--version'], { stdio: 'ignore' })
} catch {
  throw new Error('perf-get.mjs needs `perf` on the PATH (Debian: apt-get install linux-perf)')
}
const database = options.postgres === undefined ? [] : ['--database', inSchema(options.postgres, httpSchemaOf(total))]
const path = options.path ?? `/v1/entities/${idOf(123_456 % total)}`

const servers = {
  floor: floorArgs(data, database),
  'Fastify, contract': contractPeerArgs(data, database),
  'entity-registry': benchServeArgs(ROOT, data, database),
}

/**
 * The parts a sample goes to, by the first test its symbol passes: `dso` is the binary or library it
 * landed in (`[kernel.kallsyms]`, `node`, `[JIT] tid N`, `better_sqlite3.node`…), `symbol` its name.
 */
const PARTS = [
  // Where the kernel enables interrupts again after waking a thread: mostly the client woken by a write.
  { part: 'kernel: waking a thread (the client, by a write)', test: ({ dso, symbol }) => dso === '[kernel.kallsyms]' && symbol === '_raw_spin_unlock_irqrestore' },
  { part: 'kernel: the rest (TCP, system calls, scheduling)', test: ({ dso }) => dso === '[kernel.kallsyms]' },
  { part: 'V8 garbage collector (every thread)', test: ({ symbol }) => /Scaveng|MarkCompact|Marking|Sweep|Evacuat|Heap::|MinorGC|Compactor|RememberedSet|SlotSet|MemoryAllocator|IncrementalMarking/.test(symbol) },
  { part: 'SQLite (better-sqlite3)', test: ({ dso }) => dso === 'better_sqlite3.node' },
  { part: 'JavaScript of entity-registry (dist/)', test: ({ symbol }) => /^(JS|LazyCompile|Function):.*\/dist\//.test(symbol) },
  { part: 'JavaScript of the servers and packages (bench/, node_modules/)', test: ({ symbol }) => /^(JS|LazyCompile|Function):.*\/(bench|node_modules)\//.test(symbol) },
  { part: "JavaScript of Node's own modules (node:http, streams, timers)", test: ({ symbol }) => /^(JS|LazyCompile|Function):/.test(symbol) },
  { part: 'V8 builtins and runtime (property access, strings, regular expressions, promises)', test: ({ dso, symbol }) => dso === 'node' && /^(Builtins_|RegExp:|v8::|Runtime_)/.test(symbol) },
  { part: 'Node C++, llhttp and libuv', test: ({ dso }) => dso === 'node' },
  { part: 'libc, libstdc++ (malloc, memcpy) and the vDSO (clocks)', test: ({ dso }) => /^(libc|libstdc\+\+|libm|libgcc_s|\[vdso\])/.test(dso) },
  { part: 'other', test: () => true },
]

/** perf's samples of a recording, as microseconds of CPU by part and by symbol. */
function readSamples(file, requests) {
  const report = execFileSync('perf', ['report', '-i', file, '--sort', 'dso,sym', '-n', '--stdio'], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, stdio: ['ignore', 'pipe', 'ignore'] })
  const byPart = new Map(PARTS.map(({ part }) => [part, 0]))
  const bySymbol = new Map()
  for (const line of report.split('\n')) {
    // "    12.34%   3182  [kernel.kallsyms]  [k] _raw_spin_unlock_irqrestore"
    const match = /^\s*[\d.]+%\s+(\d+)\s+(.+?)\s+\[[.k]\]\s+(.*)$/.exec(line)
    if (!match) continue
    const [, samples, rawDso, rawSymbol] = match
    const dso = rawDso.trim().startsWith('[JIT]') ? '[JIT]' : rawDso.trim()
    const symbol = rawSymbol.trim().replace(/file:\/\/\S*\/dist\/[\w-]+\.js/, 'dist')
    const micros = (Number(samples) * 1e6) / FREQUENCY / requests
    const { part } = PARTS.find(({ test }) => test({ dso, symbol: rawSymbol.trim() }))
    byPart.set(part, byPart.get(part) + micros)
    const key = `${dso === '[JIT]' ? '' : `${dso} `}${symbol}`.slice(0, 120)
    bySymbol.set(key, (bySymbol.get(key) ?? 0) + micros)
  }
  return { byPart, bySymbol }
}

async function recordUnderLoad(name, args) {
  // In the recordings' folder: --perf-basic-prof also has V8 write its log (isolate-…-v8.log) where the process runs.
  const server = await startServer(process.execPath, ['--perf-basic-prof', ...args], { cwd: recordings })
  const file = join(recordings, `${name}.data`)
  const load = (duration) => autocannon({ url: server.url + path, connections: 10, duration, headers: { Authorization: `Bearer ${KEY}` } })
  await load(1) // warm-up
  const perf = spawn('perf', ['record', '-e', 'cpu-clock', '-F', String(FREQUENCY), '-p', String(server.pid), '-o', file], { stdio: 'ignore' })
  await sleep(300)
  const result = await load(Number(options.duration))
  perf.kill('SIGINT')
  await new Promise((resolve) => perf.once('exit', resolve))
  const samples = readSamples(file, result.requests.total)
  server.stop()
  // --perf-basic-prof's symbol map of the server's JIT code, read by `perf report` above.
  rmSync(`/tmp/perf-${server.pid}.map`, { force: true })
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${name}: ${result.non2xx} answers not 2xx, ${result.errors} errors`)
  return { requests: result.requests.total, rate: result.requests.average, ...samples }
}

const recordings = mkdtempSync(join(tmpdir(), 'perf-get-'))
const runs = {}
for (const [name, args] of Object.entries(servers)) runs[name] = await recordUnderLoad(name, args)
rmSync(recordings, { recursive: true, force: true })

const names = Object.keys(runs)
const cell = (value) => (value < 0.05 ? '–' : value.toFixed(1))
const lines = [
  `${machine()}; load average ${loadavg().map((value) => value.toFixed(2)).join(' ')};`,
  `GET ${path}${options.postgres === undefined ? ' on SQLite' : ' on PostgreSQL'}, autocannon 10 connections, ${options.duration} s under perf record -e cpu-clock at ${FREQUENCY} Hz (every thread, kernel included).`,
  '',
  `| part (us a request) | ${names.join(' | ')} |`,
  `|---|${names.map(() => '---:').join('|')}|`,
]
for (const { part } of PARTS) {
  if (names.every((name) => runs[name].byPart.get(part) < 0.05)) continue
  lines.push(`| ${part} | ${names.map((name) => cell(runs[name].byPart.get(part))).join(' | ')} |`)
}
const sum = (map) => [...map.values()].reduce((all, value) => all + value, 0)
lines.push(`| **all** | ${names.map((name) => `**${sum(runs[name].byPart).toFixed(1)}**`).join(' | ')} |`)
lines.push(`| requests a second, recorded | ${names.map((name) => Math.round(runs[name].rate).toLocaleString('en')).join(' | ')} |`)
console.log(lines.join('\n'))

// The symbols that cost the registry most more than the floor.
const top = Number(options.top)
if (top > 0) {
  const [floor, registry] = [runs.floor.bySymbol, runs['entity-registry'].bySymbol]
  const symbols = [...new Set([...floor.keys(), ...registry.keys()])]
  const excess = (symbol) => (registry.get(symbol) ?? 0) - (floor.get(symbol) ?? 0)
  console.log(`\nThe ${top} symbols that cost entity-registry most over the floor (us a request: floor, registry, difference):`)
  for (const symbol of symbols.sort((a, b) => excess(b) - excess(a)).slice(0, top)) {
    console.log(`${(floor.get(symbol) ?? 0).toFixed(2).padStart(6)} ${(registry.get(symbol) ?? 0).toFixed(2).padStart(6)} ${excess(symbol) >= 0 ? '+' : ''}${excess(symbol).toFixed(2)}  ${symbol}`)
  }
}
