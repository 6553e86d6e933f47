// Where a get by id's CPU goes: the floor and `entity-registry serve` (as http.mjs starts them) under
// autocannon (10 connections) on the same get by id (or, with --download, the same rendition
// download: the demo bill's 327 KB HTML), each profiled by V8's sampling profiler over the load alone
// (profile-hook.mjs), every sample given to a step by its stack (STEPS), in microseconds a request:
// the main thread's sampled time over the requests answered. Other threads' CPU (GC helpers, libuv's
// pool) is the process's CPU (/proc) less the main thread's. The garbage collections of the load too,
// by kind, a 1,000 requests.
// --heap: what a request allocates instead (the contract peer beside them), by V8's sampling heap
// profiler, each server run twice: every allocation, then only what outlived a young-generation
// collection (what makes those collections slow, and full collections come): bytes a request, by
// the frame that allocated them.
//   node bench/profile-get.mjs [--entities 300000] [--duration 5] [--interval 200] [--top 0] [--keep DIR] [--merged | --download | --path PATH] [--postgres URL [--pgbouncer]] [--heap]
// --postgres: both servers over http.mjs's schema of that server (`http.mjs --postgres URL` builds it);
// --pgbouncer (with --postgres) profiles entity-registry a second time through a PgBouncer in transaction mode.
// --merged profiles the get of an id merged twice over (http.mjs's "get merged (two hops)") instead;
// --path any request of http.mjs's (a list page: '/v1/entities?page[limit]=100').
//   node bench/profile-get.mjs --analyse DIR [--top N] [--heap]   (the profiles a run with --keep DIR left, again)
// Needs the data set of http.mjs (bench/.data/http-<entities>; `node bench/http.mjs --only get` builds it).
// --top N prints the N frames with the most self time of each server, with the step each went to.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { SourceMap } from 'node:module'
import { loadavg, tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { benchServeArgs, contractPeerArgs, DATA_DIR, floorArgs, httpSchemaOf, idOf, inSchema, KEY, machine, ROOT, startServer, throughPgBouncer } from './lib.mjs'
import { openQueries } from './servers/queries.mjs'

const { values: options } = parseArgs({
  options: {
    entities: { type: 'string', default: '300000' },
    duration: { type: 'string', default: '5' },
    interval: { type: 'string', default: '200' },
    top: { type: 'string', default: '0' },
    keep: { type: 'string' },
    analyse: { type: 'string' },
    merged: { type: 'boolean', default: false },
    download: { type: 'boolean', default: false },
    path: { type: 'string' },
    postgres: { type: 'string' },
    pgbouncer: { type: 'boolean', default: false },
    heap: { type: 'boolean', default: false },
  },
})
const total = Number(options.entities)
const data = join(DATA_DIR, `http-${total}${options.postgres === undefined ? '' : '-postgres'}`)
if (!existsSync(data) && !options.analyse) throw new Error(`no ${data}: run node bench/http.mjs --only get --entities ${total}${options.postgres === undefined ? '' : ' --postgres URL'} first`)
/** With --postgres, http.mjs's schema of that server. */
const database = options.postgres === undefined ? [] : ['--database', inSchema(options.postgres, httpSchemaOf(total))]
// The ids http.mjs gets: 1 is merged into 2, 2 into 3.
const path = options.path ?? (options.download ? await renditionPath() : `/v1/entities/${idOf(options.merged ? 1 : 123_456 % total)}`)
const profiles = options.analyse ?? options.keep ?? mkdtempSync(join(tmpdir(), 'profile-get-'))
mkdirSync(profiles, { recursive: true })

/** The download of the demo bill's first rendition (as http.mjs downloads it), read from the data set's snapshot. */
async function renditionPath() {
  const [{ snapshot }] = await (await openQueries(data, database[1])).entity('hr3590111')
  const { renditionId, filename } = JSON.parse(snapshot).texts[0].renditions[0]
  return `/v1/entities/hr3590111/renditions/${renditionId}.${filename.split('.').pop()}`
}

/**
 * The steps of a get by id (and of a download), each a test of one stack frame: `source` is the file it was written in
 * (through the source map for dist/, `node:…` for Node's own modules), `name` its function's name.
 * A sample goes to the step of the innermost frame of its stack that one of these tests matches,
 * so that a builtin (`Buffer.from`, `JSON.parse`) counts for whoever called it.
 */
const STEPS = [
  { step: 'GC', test: ({ name }) => name === '(garbage collector)' },
  { step: 'native, outside JavaScript (event loop)', test: ({ name }) => name === '(program)' },
  { step: 'write (writev, end)', test: ({ name, source }) => name === 'writev' || name === 'writeAnswer' || /^node:(net|internal\/stream_base_commons|internal\/streams\/writable)$/.test(source) || (source === 'node:_http_outgoing' && /^(end|write_|_send|_writeRaw|_finish|onFinish)$/.test(name)) || (source === 'node:_http_server' && /^(resOnFinish|_finish)$/.test(name)) },
  { step: 'headers (CORS, request id, rate-limit headers, node:http rendering them)', test: ({ name, source }) => ['requestIdOf', 'rateLimitHeaders', 'randomUUID', 'headerList'].includes(name) || name === 'writeHead' || (source === 'node:_http_outgoing' && !/^(end|write_|_send|_writeRaw|_finish|onFinish)$/.test(name)) || (source === 'node:_http_common' && /^check/.test(name)) },
  { step: 'API key (hash, lookup, cache)', test: ({ name, source }) => source.startsWith('src/auth/') || source.includes('node_modules/@noble/hashes/') || name === 'bearerToken' },
  { step: 'rate limiter', test: ({ source }) => source.startsWith('src/rate-limit/') || source === 'src/node/rate-limit.ts' },
  { step: 'routing (src/http/router.ts)', test: ({ source }) => source === 'src/http/router.ts' || source === 'src/http/explorer.ts' },
  { step: 'validation (parameters, id, media types)', test: ({ source }) => ['src/http/query.ts', 'src/contract/ids.ts', 'src/http/media-type.ts'].includes(source) },
  // A download's bytes: the blob store, and node:fs reading the file (the floor's readFile too).
  { step: 'blob (stat, read the file)', test: ({ source }) => source.startsWith('src/blobs/') || /^node:(fs|internal\/fs\/.*)$/.test(source) },
  { step: 'rendition (src/http/renditions.ts)', test: ({ source }) => source === 'src/http/renditions.ts' },
  { step: 'store (Kysely, better-sqlite3 or pg)', test: ({ source }) => source.startsWith('src/kysely/') || /node_modules\/(kysely|better-sqlite3|pg|pg-protocol|pg-pool|pg-types|postgres-array)\//.test(source) || source === 'bench/servers/queries.mjs' },
  { step: 'document (template filled, links)', test: ({ name, source }) => ['src/http/documents.ts', 'src/http/responses.ts', 'src/contract/resource-json.ts', 'src/http/links.ts'].includes(source) || (source === 'bench/servers/floor.mjs' && name !== '(anonymous)') },
  { step: 'dispatch (registry.answer, handle, serve, the entity handler)', test: ({ source }) => ['src/registry.ts', 'src/http/entities.ts', 'src/contract/merges.ts'].includes(source) },
  // The floor's listener (its one anonymous function) reads the URL, as the adapter does.
  { step: 'parse and the request (node:http, URL, the adapter)', test: ({ name, source }) => /^node:(_http_server|_http_common|_http_incoming|internal\/streams\/readable|internal\/url)$/.test(source) || source === 'adapters/node.ts' || (source === 'bench/servers/floor.mjs' && name === '(anonymous)') },
  { step: 'promises, ticks, timers, events', test: ({ name, source }) => ['runMicrotasks', 'processTicksAndRejections'].includes(name) || /^node:(events|internal\/timers|internal\/process\/task_queues|internal\/async_hooks)$/.test(source) },
]

/**
 * CPU time so far, in microseconds, of process `pid` (or of its main thread, `/proc/<pid>/task/<pid>`):
 * user and system, or the system (kernel) part alone, where a download's copy into the socket goes.
 */
function cpuMicros(pid, { mainThread = false, systemOnly = false } = {}) {
  const fields = readFileSync(mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (((systemOnly ? 0 : Number(fields[11])) + Number(fields[12])) * 1e6) / 100
}

/** Where a run's profile goes: a CPU profile, or a heap profile of every allocation or of the survivors. */
const profileFile = (name, sampling) => join(profiles, sampling === undefined ? `${name}.cpuprofile` : `${name}.${sampling}.heapprofile`)

async function profileUnderLoad(name, args, sampling) {
  const file = profileFile(name, sampling)
  rmSync(file, { force: true })
  const server = await startServer(process.execPath, ['--import', join(ROOT, 'bench/profile-hook.mjs'), ...args], {
    env: { PROFILE: file, CPU_PROFILE_INTERVAL: options.interval, ...(sampling === undefined ? {} : { HEAP_SAMPLING: sampling }) },
  })
  const load = (duration) => autocannon({ url: server.url + path, connections: 10, duration, headers: { Authorization: `Bearer ${KEY}` } })
  await load(1) // warm-up
  process.kill(server.pid, 'SIGUSR2')
  await sleep(100)
  const times = () => [cpuMicros(server.pid), cpuMicros(server.pid, { mainThread: true }), cpuMicros(server.pid, { systemOnly: true })]
  const before = times()
  const result = await load(Number(options.duration))
  const [cpu, mainThreadCpu, systemCpu] = times().map((value, index) => value - before[index])
  process.kill(server.pid, 'SIGUSR2')
  for (let waited = 0; !existsSync(file); waited += 50) {
    if (waited > 30_000) throw new Error(`${name}: no profile in ${file}`)
    await sleep(50)
  }
  await sleep(200)
  server.stop()
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${name}: ${result.non2xx} answers not 2xx, ${result.errors} errors`)
  const run = { requests: result.requests.total, rate: result.requests.average, cpu, mainThreadCpu, systemCpu }
  writeFileSync(`${file}.json`, JSON.stringify(run))
  return run
}

function readRun(name, sampling) {
  const file = profileFile(name, sampling)
  const read = (path) => JSON.parse(readFileSync(path, 'utf8'))
  return { ...read(`${file}.json`), collections: read(`${file}.gc.json`), profile: read(file) }
}

const sourceMaps = new Map()
/** Where a frame was written: the original source of dist/ code, `node:…`, a package path, or the frame's kind. */
function sourceOf({ url, lineNumber, columnNumber }) {
  if (url === '') return ''
  if (url.startsWith('node:')) return url
  const file = url.startsWith('file:') ? fileURLToPath(url) : url
  if (!sourceMaps.has(file)) sourceMaps.set(file, existsSync(`${file}.map`) ? new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8'))) : null)
  const map = sourceMaps.get(file)
  const original = map?.findEntry(lineNumber, columnNumber)?.originalSource
  return original ? relative(ROOT, fileURLToPath(new URL(original, pathToFileURL(file)))) : relative(ROOT, file)
}

/** Microseconds a request of each step, and the frames with the most self time. */
function attribute({ profile, requests }) {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
  const parents = new Map()
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id)
  const stepOfNode = new Map()
  function stepOf(id) {
    if (stepOfNode.has(id)) return stepOfNode.get(id)
    const { callFrame } = nodes.get(id)
    const frame = { name: callFrame.functionName, source: sourceOf(callFrame) }
    const own = STEPS.find((step) => step.test(frame))?.step
    const step = own ?? (parents.has(id) ? stepOf(parents.get(id)) : 'other JavaScript')
    stepOfNode.set(id, step)
    return step
  }
  const perStep = new Map()
  const perFrame = new Map()
  let busy = 0
  profile.samples.forEach((id, index) => {
    const micros = profile.timeDeltas[index + 1] ?? 0
    const { callFrame } = nodes.get(id)
    if (callFrame.functionName === '(idle)') return
    busy += micros
    const step = stepOf(id)
    perStep.set(step, (perStep.get(step) ?? 0) + micros)
    const key = `${callFrame.functionName || '(anonymous)'} ${sourceOf(callFrame)} → ${step}`
    perFrame.set(key, (perFrame.get(key) ?? 0) + micros)
  })
  const perRequest = (micros) => micros / requests
  return {
    busy: perRequest(busy),
    steps: new Map([...perStep].map(([step, micros]) => [step, perRequest(micros)])),
    frames: [...perFrame].sort((a, b) => b[1] - a[1]).map(([key, micros]) => [key, perRequest(micros)]),
  }
}

/** Bytes a request by the frame that allocated them (self size), and in all. */
function attributeHeap({ profile, requests }) {
  const perFrame = new Map()
  let bytes = 0
  const walk = (node) => {
    if (node.selfSize > 0) {
      const key = `${node.callFrame.functionName || '(anonymous)'} ${sourceOf(node.callFrame)}`
      perFrame.set(key, (perFrame.get(key) ?? 0) + node.selfSize)
      bytes += node.selfSize
    }
    for (const child of node.children) walk(child)
  }
  walk(profile.head)
  return { bytes: bytes / requests, frames: [...perFrame].sort((a, b) => b[1] - a[1]).map(([key, total]) => [key, total / requests]) }
}

if (options.pgbouncer && options.postgres === undefined) throw new Error('--pgbouncer needs --postgres')
const bouncer = options.pgbouncer && !options.analyse ? await throughPgBouncer(options.postgres, httpSchemaOf(total)) : undefined
const servers = {
  floor: floorArgs(data, database),
  ...(options.heap ? { 'Fastify, contract': contractPeerArgs(data, database) } : {}),
  'entity-registry': benchServeArgs(ROOT, data, database),
  ...(options.pgbouncer ? { 'entity-registry, through PgBouncer': benchServeArgs(ROOT, data, ['--database', bouncer?.database]) } : {}),
}
const samplings = options.heap ? ['all', 'survivors'] : [undefined]
try {
  if (!options.analyse) for (const [name, args] of Object.entries(servers)) for (const sampling of samplings) await profileUnderLoad(name, args, sampling)
} finally {
  await bouncer?.server.stop()
}
const names = Object.keys(servers)
/** Per server, its run of each sampling (one CPU profile, or the two heap profiles). */
const runs = Object.fromEntries(names.map((name) => [name, samplings.map((sampling) => readRun(name, sampling))]))
/** A table row: `value` of each server's name. */
const row = (label, value) => console.log(`| ${label} | ${names.map(value).join(' | ')} |`)
/** Garbage collections of a kind in a run, a thousand requests: how many, and their milliseconds. */
const collected = (run, kind) => {
  const { count = 0, ms = 0 } = run.collections[kind] ?? {}
  return `${((count * 1000) / run.requests).toFixed(1)}; ${((ms * 1000) / run.requests).toFixed(1)} ms`
}
const collectionRows = () => {
  for (const kind of ['young', 'incremental marking', 'full']) row(`${kind} collections a 1,000 requests (count; time)`, (name) => collected(runs[name][0], kind))
}
const header = (what) => {
  console.log(`${machine()}; ${new Date().toISOString().slice(0, 10)}; load average ${loadavg().map((value) => value.toFixed(2)).join(' ')};`)
  console.log(`GET ${path}, autocannon 10 connections, ${options.duration} s under ${what}; profiles in ${profiles}`)
  console.log('')
  console.log(`| | ${names.join(' | ')} |`)
  console.log(`|---|${names.map(() => '---:').join('|')}|`)
}

if (options.heap) {
  const results = Object.fromEntries(names.map((name) => [name, runs[name].map(attributeHeap)]))
  for (const [name, [all, survivors]] of Object.entries(results)) {
    for (const [key, bytes] of all.frames.slice(0, Number(options.top))) console.log(`${name}, allocated: ${bytes.toFixed(0)} B  ${key}`)
    for (const [key, bytes] of survivors.frames.slice(0, Number(options.top))) console.log(`${name}, outlived a young collection: ${bytes.toFixed(0)} B  ${key}`)
  }
  header("V8's sampling heap profiler (every 512 bytes), one run of each server for all allocations, one for their survivors")
  row('bytes allocated a request', (name) => results[name][0].bytes.toFixed(0))
  row('bytes a request that outlived a young collection (or were allocated old)', (name) => results[name][1].bytes.toFixed(0))
  collectionRows()
  row('requests a second (profiled, all allocations)', (name) => Math.round(runs[name][0].rate).toLocaleString('en'))
} else {
  const results = Object.fromEntries(names.map((name) => [name, attribute(runs[name][0])]))
  for (const [name, result] of Object.entries(results)) {
    for (const [key, micros] of result.frames.slice(0, Number(options.top))) console.log(`${name}: ${micros.toFixed(2)} us  ${key}`)
  }
  const order = [...STEPS.map((step) => step.step), 'other JavaScript']
  const stepNames = [...new Set([...order, ...Object.values(results).flatMap((result) => [...result.steps.keys()])])]
  const us = (value) => (value === undefined ? '–' : value.toFixed(1))
  header(`V8's sampling profiler (every ${options.interval} us)`)
  for (const step of stepNames) {
    if (Object.values(results).every((result) => !result.steps.has(step))) continue
    row(step, (name) => us(results[name].steps.get(step)))
  }
  row('**main thread, sampled**', (name) => `**${us(results[name].busy)}**`)
  const perRequest = (name, value) => us(value(runs[name][0]) / runs[name][0].requests)
  row('main thread CPU (/proc)', (name) => perRequest(name, (run) => run.mainThreadCpu))
  row('other threads (GC helpers, libuv)', (name) => perRequest(name, (run) => run.cpu - run.mainThreadCpu))
  row('process CPU (/proc)', (name) => perRequest(name, (run) => run.cpu))
  row('of which system (kernel)', (name) => perRequest(name, (run) => run.systemCpu))
  collectionRows()
  row('requests a second (profiled)', (name) => Math.round(runs[name][0].rate).toLocaleString('en'))
}
