// The live change feed at scale: N long-polls (waitSeconds) or event streams waiting on one
// `entity-registry serve` (SQLite, the demo data), and what they cost. Measured:
// - the server's RSS idle, once the N have waited 20 s (goal: at most 150 MB more at 10,000), and at its peak;
// - the store's queries over 10 s while they wait and nothing changes (goal: none);
// - a get by id's latency (p50, p99) beside them against idle (goal: p99 within 2x);
// - from a commit in another process to each waiting client's answer or event (goal: p99 <= 500 ms).
//   node bench/live-feed.mjs [--clients 10000] [--mode stream|long-poll] [--commits 10] [--client-processes 2] [--dist DIR] [--profile DIR] [--floor]
// --floor: the same run against a hand-written long-poll server over the same SQLite file
// (servers/live-feed-floor.mjs), in place of `serve`.
// --profile DIR: V8 CPU profiles of the commits into DIR: the server's over the commits alone
// (profile-hook.mjs), each client process's over its whole run (summarise with profile-top.mjs).
// Needs `npm run build` (--dist: serve another build's dist/, to compare two in one sitting). The
// clients are raw sockets in --client-processes forked processes (live-feed-clients.mjs), the writer in
// another: all on the same cores as the server.
import { fork, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir, loadavg } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { KEY, machine, processCpuMicros, quantile, ROOT, startServer } from './lib.mjs'

const { values: options } = parseArgs({
  options: { clients: { type: 'string', default: '10000' }, mode: { type: 'string', default: 'stream' }, commits: { type: 'string', default: '10' },
    'client-processes': { type: 'string', default: '2' },
    dist: { type: 'string', default: join(ROOT, 'dist') },
    profile: { type: 'string' },
    floor: { type: 'boolean', default: false },
  },
})
const clients = Number(options.clients)
const mode = options.mode
if (mode !== 'stream' && mode !== 'long-poll') throw new Error('--mode stream or long-poll')
if (options.floor && mode !== 'long-poll') throw new Error('--floor serves long-polls only')
// The floor has no profile hook: the signal that starts the profiler would end it.
if (options.floor && options.profile !== undefined) throw new Error('--floor cannot be profiled')
const loadAverageAtStart = loadavg().map((v) => v.toFixed(1)).join(' ')
const data = mkdtempSync(join(tmpdir(), 'er-bench-live-'))
const cli = join(options.dist, 'cli/main.js')
await new Promise((resolve, reject) =>
  spawn(process.execPath, [cli, 'import', join(ROOT, 'demo/entities.jsonl'), '--data', data, '--progress', 'none'], { stdio: 'ignore' }).once('exit', (code) =>
    code === 0 ? resolve() : reject(new Error(`import exited ${code}`)),
  ),
)
if (options.profile !== undefined) mkdirSync(options.profile, { recursive: true })
const profiling = options.profile === undefined ? [] : ['--import', join(ROOT, 'bench/profile-hook.mjs')]
const server = options.floor
  ? await startServer(process.execPath, [join(ROOT, 'bench/servers/live-feed-floor.mjs'), data])
  : await startServer(process.execPath, [
      ...[...profiling, cli, 'serve', '--data', data, '--api-key', KEY, '--rate-limit', '0', '--auth-failure-limit', '0'],
      ...['--search', 'none', '--port', '0', '--admin-port', '0', '--log', 'warn', '--max-waiting', String(clients + 100)],
    ], { env: options.profile === undefined ? {} : { PROFILE: join(options.profile, `server-${mode}.cpuprofile`) } })
// The floor answers /metrics where it serves.
server.admin ??= server.url
// A failed run must not leave its server behind.
process.once('uncaughtException', (error) => {
  server.stop()
  throw error
})
const statusMb = (field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))[1]) / 1024
const rssMb = () => statusMb('VmRSS')
const headers = { Authorization: `Bearer ${KEY}` }
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const now = () => performance.timeOrigin + performance.now()

/** Queries the store made, from /metrics (every read is timed there). */
async function storeQueries() {
  const text = await (await fetch(`${server.admin}/metrics`)).text()
  return [...text.matchAll(/^entity_registry_store_query_duration_seconds_count\{[^}]*\} (\d+)/gm)].reduce((sum, match) => sum + Number(match[1]), 0)
}

/** p50 and p99 of gets by id, 4 at a time for `seconds`. */
async function getLatency(seconds) {
  const ids = ['hr3590111', 's1111', 'hconres74112']
  const samples = []
  const until = performance.now() + seconds * 1000
  await Promise.all(
    Array.from({ length: 4 }, async (_, worker) => {
      for (let n = worker; performance.now() < until; n += 4) {
        const started = performance.now()
        const response = await fetch(`${server.url}/v1/entities/${ids[n % ids.length]}`, { headers })
        await response.arrayBuffer()
        samples.push(performance.now() - started)
      }
    }),
  )
  samples.sort((a, b) => a - b)
  return { p50: quantile(samples, 0.5), p99: quantile(samples, 0.99), count: samples.length }
}

const PERSONS = '/v1/entities/changes?filter=type:person'
const head = (await (await fetch(`${server.url}/v1/entities?page[limit]=1`, { headers })).headers.get('change-feed-head')) ?? null
/** Why clients failed to open or were cut (none expected). */
const failures = []
const { hostname, port } = new URL(server.url)
const processCount = Number(options['client-processes'])
const clientProcesses = Array.from({ length: processCount }, (_, index) => {
  const execArgv = options.profile === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', options.profile, '--cpu-prof-name', `clients-${mode}-${index}.cpuprofile`]
  const child = fork(join(ROOT, 'bench/live-feed-clients.mjs'), { execArgv })
  const count = Math.floor(clients / processCount) + (index < clients % processCount ? 1 : 0)
  const path = `${PERSONS}&page[after]=${head}${mode === 'long-poll' ? '&waitSeconds=60' : ''}`
  child.send({ open: { host: hostname, port: Number(port), key: KEY, path, mode, count } })
  return child
})
/** Each client process's answer to a round: when each of its clients heard of the commit (0: not yet). */
function heardIn(round, deadlineMs) {
  return Promise.all(
    clientProcesses.map(
      (child) =>
        new Promise((resolve) => {
          const timer = setTimeout(() => child.send({ collect: true }), deadlineMs)
          const onMessage = (message) => {
            if (message.round !== round) return
            clearTimeout(timer)
            child.off('message', onMessage)
            failures.push(...message.failures)
            resolve(message.heard)
          }
          child.on('message', onMessage)
        }),
    ),
  ).then((lists) => lists.flat())
}

/** The server's V8 heap in use and its external memory (buffers), MB, from /metrics. */
async function heapMb() {
  const text = await (await fetch(`${server.admin}/metrics`)).text()
  const value = (name) => Number(new RegExp(`^entity_registry_${name} (\\S+)`, 'm').exec(text)?.[1] ?? 0) / 2 ** 20
  return { used: value('nodejs_heap_size_used_bytes'), external: value('nodejs_external_memory_bytes') }
}
const idleRss = rssMb()
const idleHeap = await heapMb()
// Warmed first: the bench's own client (fetch) and the server's code are slow the first seconds.
await getLatency(3)
const idleGets = await getLatency(5)
const started = performance.now()
const waitingCount = async () => {
  const text = await (await fetch(`${server.admin}/metrics`)).text()
  const value = (name) => Number(new RegExp(`^entity_registry_${name} (\\d+)`, 'm').exec(text)?.[1] ?? 0)
  return value('change_feed_long_polls_waiting') + value('change_feed_streams_open')
}
while ((await waitingCount()) < clients && performance.now() - started < 120_000) await sleep(500)
const waiting = await waitingCount()
const openSeconds = (performance.now() - started) / 1000
await sleep(3000)
const queriesBefore = await storeQueries()
await sleep(10_000)
const idleQueries = (await storeQueries()) - queriesBefore
// Held once they have waited a while (20 s), past the young collections that follow a crowd's arrival.
await sleep(7000)
const waitingRss = rssMb()
const peakRss = statusMb('VmHWM')
const waitingHeap = await heapMb()
const busyGets = await getLatency(5)

// Commits in another process: one upsert each, its time printed once committed.
const writer = spawn(
  process.execPath,
  [
    '--input-type=module',
    '-e',
    `import { openStore } from ${JSON.stringify(join(ROOT, 'dist/kysely/index.js'))}
     import { createInterface } from 'node:readline'
     const store = await openStore(${JSON.stringify(join(data, 'registry.sqlite'))})
     let n = 0
     for await (const line of createInterface({ input: process.stdin })) {
       await store.warehouse.upsert({ id: 'livebench' + n, type: 'person', name: 'Live ' + n++ })
       console.log(performance.timeOrigin + performance.now())
     }
     await store.close()`,
  ],
  { stdio: ['pipe', 'pipe', 'inherit'] },
)
const committed = createLines(writer.stdout)
const latencies = []
let commitsCpuMicros = 0
if (options.profile !== undefined) process.kill(server.pid, 'SIGUSR2')
for (let commit = 0; commit < Number(options.commits); commit++) {
  for (const child of clientProcesses) child.send({ round: commit })
  // The round's reset reaches every client process before the commit does.
  await sleep(200)
  const cpuBefore = processCpuMicros(server.pid)
  writer.stdin.write('go\n')
  const at = Number(await committed())
  for (const time of await heardIn(commit, 10_000)) latencies.push(time > 0 ? time - at : Infinity)
  // Once every client has heard: a long-poll's next request has come, or is coming, in this time.
  await sleep(1000)
  commitsCpuMicros += processCpuMicros(server.pid) - cpuBefore
}
writer.stdin.end()
if (options.profile !== undefined) {
  process.kill(server.pid, 'SIGUSR2')
  await sleep(2000)
}
latencies.sort((a, b) => a - b)
for (const child of clientProcesses) child.send({ stop: true })
await Promise.all(clientProcesses.map((child) => new Promise((resolve) => child.once('exit', resolve))))
server.stop()
rmSync(data, { recursive: true, force: true })

const f = (value) => (Number.isFinite(value) ? value.toFixed(1) : 'none')
console.log(`machine: ${machine()}; load average before/after: ${loadAverageAtStart} / ${loadavg().map((v) => v.toFixed(1)).join(' ')}`)
console.log(`${options.floor ? 'the floor (bench/servers/live-feed-floor.mjs), ' : ''}${mode}: ${waiting} of ${clients} waiting (opened in ${openSeconds.toFixed(1)} s)`)
if (failures.length > 0) console.log(`${failures.length} clients failed: ${[...new Set(failures)].slice(0, 3).join('; ')}`)
console.log(`server RSS: idle ${idleRss.toFixed(0)} MB, with them waiting 20 s ${waitingRss.toFixed(0)} MB (+${(waitingRss - idleRss).toFixed(0)} MB); at its peak, while they opened, ${peakRss.toFixed(0)} MB (+${(peakRss - idleRss).toFixed(0)} MB)`)
console.log(`server V8 heap in use: idle ${idleHeap.used.toFixed(0)} MB, waiting ${waitingHeap.used.toFixed(0)} MB; external: ${idleHeap.external.toFixed(0)} MB, ${waitingHeap.external.toFixed(0)} MB`)
console.log(`store queries over 10 s of waiting with nothing changing: ${idleQueries}`)
console.log(`get by id, 4 at a time for 5 s: idle p50 ${f(idleGets.p50)} ms p99 ${f(idleGets.p99)} ms; beside them p50 ${f(busyGets.p50)} ms p99 ${f(busyGets.p99)} ms (${(busyGets.p99 / idleGets.p99).toFixed(2)}x)`)
console.log(
  `commit to client, ${options.commits} commits x ${clients} clients: p50 ${f(quantile(latencies, 0.5))} ms, p99 ${f(quantile(latencies, 0.99))} ms, max ${f(latencies.at(-1))} ms; missed ${latencies.filter((v) => !Number.isFinite(v)).length}`,
)
console.log(
  `server CPU a commit (its wake, the answers or events, and a long-poll's next requests): ${(commitsCpuMicros / 1000 / Number(options.commits)).toFixed(0)} ms`,
)
process.exit(0)

function createLines(stream) {
  const lines = []
  const waiters = []
  let buffered = ''
  stream.setEncoding('utf8').on('data', (chunk) => {
    buffered += chunk
    let end
    while ((end = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, end)
      buffered = buffered.slice(end + 1)
      if (waiters.length > 0) waiters.shift()(line)
      else lines.push(line)
    }
  })
  return () => (lines.length > 0 ? Promise.resolve(lines.shift()) : new Promise((resolve) => waiters.push(resolve)))
}
