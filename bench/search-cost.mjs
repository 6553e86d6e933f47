// Search's CPU a query at 1,000,000 entities, over HTTP as a user loads it (issue 41), beside its
// floor in the same run:
//   - registry: `entity-registry serve` over the catalogue (`catalogEntities`: persons, bills,
//     committees, words by Zipf's law), imported and indexed as a user does it (`import --batch
//     10000`, then `reindex`), the default index (LanceDB) or `--postgres URL` (`--search postgres`);
//   - floor: servers/search-floor.mjs, node:http over better-sqlite3's FTS5 index of the same
//     entities' titles and names, answering the lexical half of each query (any of its words by
//     bm25, the prefilter as tokens the words are intersected with, up to 100 results).
// With `--texts N`, N of the entities (spread: `textBearers`) have a plain-text rendition of about
// 20 KB (`catalogTexts`), which `import` stores and `reindex` cuts into passages; the floor's FTS5
// table has their texts in a column of its own; and a fifth set (`--sets text`) asks a title word
// beside a word only texts hold.
// Four query sets (`catalogQuerySets`), every query distinct within the run: each measurement sends a
// slice of its set that no other measurement of that server sends, and the warm-up its own. Each
// set at 1 and at 10 connections, the servers taking turns: queries a second, p50, p99, and CPU a
// query (the server process's user and system time, every thread, and with --postgres its PostgreSQL
// backends', over the queries it answered).
//   node bench/search-cost.mjs [--entities 1000000] [--duration 5] [--sets title,prefilter,name,common]
//     [--connections 1,10] [--only registry|floor] [--queries 3000] [--postgres URL] [--reindex] [--texts N]
// after `npm run build`. The data is built once: the registry's under bench/.data/search-catalog-<entities>
// (-texts-<N> with texts; -postgres and the schema bench_search_catalog_<entities> with --postgres), the floor's in
// search-catalog-<entities>-floor.sqlite beside it; `--reindex` measures `reindex`'s peak RSS again.
import { spawnSync } from 'node:child_process'
import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { finished } from 'node:stream/promises'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { catalogEntities, catalogQuerySets, catalogTexts, DATA_DIR, inSchema, KEY, machine, processCpuMicros, quantile, RATE_LIMIT, ROOT, startServer, writeSearchFloor } from './lib.mjs'

const { values: options } = parseArgs({
  options: {
    entities: { type: 'string', default: '1000000' },
    duration: { type: 'string', default: '5' },
    sets: { type: 'string', default: 'title,prefilter,name,common' },
    connections: { type: 'string', default: '1,10' },
    only: { type: 'string' },
    queries: { type: 'string', default: '3000' },
    postgres: { type: 'string' },
    reindex: { type: 'boolean', default: false },
    texts: { type: 'string', default: '0' },
  },
})
const total = Number(options.entities)
const textCount = Number(options.texts)
const texts = textCount > 0 ? catalogTexts(total, textCount) : null
const duration = Number(options.duration)
const connectionCounts = options.connections.split(',').map(Number)
// `disk`: the same registry searching its index alone (`--no-search-in-memory`: LanceDB on disk, or inside PostgreSQL), what search cost before the resident index.
const SERVERS = ['registry', 'disk', 'floor']
const servers = options.only === undefined ? SERVERS : options.only.split(',')
for (const server of servers) if (!SERVERS.includes(server)) throw new Error(`--only takes ${SERVERS.join(', ')} (a comma list), not ${server}`)
/** The sets by their short names (`--sets`). */
const SET_NAMES = { title: 'title words', prefilter: 'title words, 2% prefilter', name: 'name with a typo', common: 'common word', text: 'a title word and a text word' }
const setNames = options.sets.split(',').map((short) => {
  if (!(short in SET_NAMES)) throw new Error(`--sets takes ${Object.keys(SET_NAMES).join(', ')}, not ${short}`)
  if (short === 'text' && texts === null) throw new Error('--sets text needs --texts N')
  return SET_NAMES[short]
})
const cli = join(ROOT, 'dist/cli/main.js')
const directory = join(DATA_DIR, `search-catalog-${total}${texts === null ? '' : `-texts-${textCount}`}`)
/**
 * The registry as it is built and served: over the data directory with the default index (LanceDB
 * under it), or with `--postgres` the store and the index in the schema bench_search_catalog_<total>
 * (no vectors: the shared server has no pgvector), the data directory holding only the blobs.
 */
const schema = `bench_search_catalog_${total}${texts === null ? '' : `_texts_${textCount}`}`
const registry =
  options.postgres === undefined
    ? { label: 'registry (LanceDB, in memory)', directory, store: [], search: [] }
    : {
        label: 'registry (PostgreSQL, no vectors, in memory)',
        directory: `${directory}-postgres`,
        schema,
        // pg_trgm and the other extensions are in public.
        store: ['--database', inSchema(options.postgres, `${schema},public`)],
        search: ['--search', 'postgres', '--embedder', 'none'],
      }
const loadAverage = () => loadavg().map((load) => load.toFixed(2)).join(', ')

/** Runs the CLI under `/usr/bin/time`: its seconds and peak RSS (MB). */
function cliRun(args) {
  const started = performance.now()
  const run = spawnSync('/usr/bin/time', ['-f', 'peak %M KB', process.execPath, cli, ...args], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' })
  if (run.status !== 0) throw new Error(`${args[0]} failed: ${run.stderr}`)
  return { seconds: Math.round((performance.now() - started) / 1000), peakMb: Math.round(Number(/peak (\d+) KB/.exec(run.stderr)[1]) / 1024) }
}

/** The registry's data, built once as a user builds it; what the build cost is kept in build.json in its directory. */
async function registryData() {
  if (existsSync(registry.directory)) return registry.directory
  const partial = `${registry.directory}.partial`
  if (registry.schema !== undefined) {
    const client = new pg.Client({ connectionString: options.postgres })
    await client.connect()
    // The extensions in public before the index makes them: else in its schema, where the test suites' do not look.
    for (const extension of ['pg_trgm', 'btree_gin']) await client.query(`CREATE EXTENSION IF NOT EXISTS ${extension} SCHEMA public`)
    await client.query(`DROP SCHEMA IF EXISTS ${registry.schema} CASCADE`)
    await client.query(`CREATE SCHEMA ${registry.schema}`)
    await client.end()
  }
  rmSync(partial, { recursive: true, force: true })
  mkdirSync(partial, { recursive: true })
  const file = join(partial, 'records.ndjson')
  const out = createWriteStream(file)
  const { recordOf } = catalogEntities()
  if (texts !== null) mkdirSync(join(partial, 'texts'))
  for (let n = 0; n < total; n++) {
    const record = recordOf(n)
    // A text as a plain-text rendition beside the records, which `import` stores and `reindex` reads.
    if (texts?.hasText(n)) {
      writeFileSync(join(partial, 'texts', `${record.id}.txt`), texts.textOf())
      record.texts = [{ type: 'text', renditions: [{ conversion: 'original', mime: 'text/plain', language: 'en', filename: `${record.id}.txt`, file: `texts/${record.id}.txt` }] }]
    }
    if (!out.write(`${JSON.stringify(record)}\n`)) await new Promise((resolve) => out.once('drain', resolve))
  }
  out.end()
  await finished(out)
  const build = {
    import: cliRun(['import', '--data', partial, ...registry.store, '--batch', '10000', '--progress', 'none', file]),
    reindex: cliRun(['reindex', '--data', partial, ...registry.store, ...registry.search, '--progress', 'none']),
  }
  writeFileSync(join(partial, 'build.json'), JSON.stringify({ ...build, loadAverage: loadAverage() }))
  rmSync(file)
  rmSync(join(partial, 'texts'), { recursive: true, force: true })
  renameSync(partial, registry.directory)
  return registry.directory
}

/** The floor's FTS5 file beside the registry's data, built once from the same records (`writeSearchFloor`). */
function floorData() {
  const file = `${directory}-floor.sqlite`
  if (existsSync(file)) return file
  const { recordOf } = catalogEntities()
  // The same texts again: their generator started anew draws them in the same order.
  const again = texts === null ? null : catalogTexts(total, textCount)
  writeSearchFloor(file, (function* () {
    for (let n = 0; n < total; n++) yield again?.hasText(n) ? { ...recordOf(n), text: again.textOf() } : recordOf(n)
  })(), { withTexts: texts !== null })
  return file
}

/** `reindex` of the kept data into a scratch index (LanceDB's kept one untouched; PostgreSQL's rebuilt in place): its seconds and peak RSS. */
function reindexAgain() {
  const scratch = join(DATA_DIR, `search-catalog-${total}-reindex`)
  rmSync(scratch, { recursive: true, force: true })
  try {
    return cliRun(['reindex', '--data', data, ...registry.store, ...(registry.schema === undefined ? ['--search', scratch] : registry.search), '--progress', 'none'])
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

/** The registry's server, with the benchmarks' key and a rate limit no run reaches. */
const startRegistry = (inMemory = true) =>
  startServer(process.execPath, [cli, 'serve', '--data', data, ...registry.store, ...registry.search, '--api-key', KEY, '--rate-limit', RATE_LIMIT, '--log', 'warn', '--port', '0', ...(inMemory ? [] : ['--no-search-in-memory'])], {
    // Measured once the index is in memory (LanceDB's or PostgreSQL's).
    ...(inMemory ? { readyWhen: /^search: \d+ entities loaded in memory/ } : {}),
  })

/** GET `path` on a kept-alive connection of `agent`: the status and the body. */
function get(url, agent, path) {
  return new Promise((resolve, reject) => {
    const sent = request(`${url}${path}`, { agent, headers: { Authorization: `Bearer ${KEY}` } }, (response) => {
      const chunks = []
      response.on('data', (chunk) => chunks.push(chunk))
      response.on('end', () => resolve({ status: response.statusCode, body: Buffer.concat(chunks) }))
      response.on('error', reject)
    })
    sent.on('error', reject)
    sent.end()
  })
}
const pathOf = (query) => `/v1/search?q=${encodeURIComponent(query)}`

/**
 * CPU time so far (microseconds) by process: the server's, and with `--postgres` a registry's
 * PostgreSQL backends' (the index runs there): those whose client port is one of the server's
 * sockets to PostgreSQL (both on this machine).
 */
async function cpuOf(server) {
  const times = new Map([[server.pid, processCpuMicros(server.pid)]])
  if (server.database === undefined) return times
  const sockets = new Set(
    readdirSync(`/proc/${server.pid}/fd`).flatMap((fd) => {
      try {
        return /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${server.pid}/fd/${fd}`))?.slice(1) ?? []
      } catch {
        return [] // closed meanwhile
      }
    }),
  )
  const postgresPort = Number(new URL(options.postgres).port || 5432)
  // /proc/<pid>/net/tcp: local and remote address:port in hex, the socket's inode in the tenth column.
  const ports = readFileSync(`/proc/${server.pid}/net/tcp`, 'utf8')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => sockets.has(fields[9]) && parseInt(fields[2]?.split(':')[1], 16) === postgresPort)
    .map((fields) => parseInt(fields[1].split(':')[1], 16))
  const { rows } = await server.database.query('SELECT pid FROM pg_stat_activity WHERE client_port = ANY($1)', [ports])
  for (const { pid } of rows) {
    try {
      times.set(pid, processCpuMicros(pid))
    } catch {
      // ended meanwhile: its time since the last read is lost
    }
  }
  return times
}
/** A process's resident memory now and at its peak (`/proc/<pid>/status`: VmRSS, VmHWM), in MB. */
function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const mb = (field) => Math.round(Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)[1]) / 1024)
  return `RSS ${mb('VmRSS')} MB, peak ${mb('VmHWM')} MB`
}

/** CPU microseconds between two `cpuOf`s: a process that began meanwhile counts from its start. */
const cpuSince = (before, after) => [...after].reduce((sum, [pid, micros]) => sum + micros - (before.get(pid) ?? 0), 0)

/**
 * `connections` clients sending the queries in turn, each a new one, until `duration` ends or the
 * queries do: the rate, p50, p99 and CPU a query of the answers (200), and how many failed by status.
 */
async function measure(server, queries, connections) {
  const agent = new Agent({ keepAlive: true, maxSockets: connections })
  const samples = []
  const failures = new Map()
  let next = 0
  const cpuBefore = await cpuOf(server)
  const started = performance.now()
  const until = started + duration * 1000
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until && next < queries.length) {
        const path = pathOf(queries[next++])
        const sentAt = performance.now()
        const { status } = await get(server.url, agent, path)
        if (status === 200) samples.push(performance.now() - sentAt)
        else failures.set(status, (failures.get(status) ?? 0) + 1)
      }
    }),
  )
  const seconds = (performance.now() - started) / 1000
  const cpuMicros = cpuSince(cpuBefore, await cpuOf(server))
  agent.destroy()
  samples.sort((a, b) => a - b)
  return { answered: samples.length, rate: samples.length / seconds, p50: quantile(samples, 0.5), p99: quantile(samples, 0.99), cpu: cpuMicros / 1000 / samples.length, exhausted: next >= queries.length, failures }
}

/** Sends the warm-up queries one at a time: the mean number of results of each set's answers, and the failures. */
async function warm(server, warmups) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const results = {}
  for (const [name, queries] of Object.entries(warmups)) {
    const counts = []
    const failures = []
    for (const query of queries) {
      const { status, body } = await get(server.url, agent, pathOf(query))
      if (status === 200) counts.push(JSON.parse(body).data.length)
      else failures.push(`${status} for \`${query}\`: ${JSON.parse(body).errors?.[0]?.detail}`)
    }
    results[name] = `${(counts.reduce((sum, count) => sum + count, 0) / counts.length).toFixed(1)}${failures.length > 0 ? ` (${failures.length} failed: ${failures[0]})` : ''}`
  }
  agent.destroy()
  return results
}

const WARM_UP = 20
const data = await registryData()
const floorFile = servers.includes('floor') ? floorData() : undefined
const build = existsSync(join(data, 'build.json')) ? JSON.parse(readFileSync(join(data, 'build.json'), 'utf8')) : undefined
console.log(`machine: ${machine()}; load average ${loadAverage()}`)
if (build === undefined) console.log('built elsewhere: --reindex measures its reindex')
else console.log(`built: import ${build.import.seconds} s (peak RSS ${build.import.peakMb} MB), reindex ${build.reindex.seconds} s (peak RSS ${build.reindex.peakMb} MB); load average then ${build.loadAverage}`)
if (options.reindex) {
  const { seconds, peakMb } = reindexAgain()
  console.log(`reindex of ${total.toLocaleString('en')} entities: ${seconds} s, peak RSS ${peakMb} MB (load average ${loadAverage()})`)
}

// Per set: the warm-up's queries, then one slice per connection count, sent to each server alike.
const perSet = Number(options.queries)
const allSets = catalogQuerySets(total, WARM_UP + perSet, 1, texts)
const sets = Object.fromEntries(setNames.map((name) => [name, allSets[name]]))
const sliceLength = Math.floor(perSet / connectionCounts.length)
const sliceOf = (queries, at) => queries.slice(WARM_UP + at * sliceLength, WARM_UP + (at + 1) * sliceLength)

const running = {}
try {
  for (const name of servers) {
    const started = performance.now()
    running[name] = await (name === 'floor' ? startServer(process.execPath, [join(ROOT, 'bench/servers/search-floor.mjs'), floorFile]) : startRegistry(name === 'registry'))
    console.log(`${name}: ready in ${((performance.now() - started) / 1000).toFixed(1)} s; ${memoryOf(running[name].pid)}`)
  }
  // Each registry's backends counted (`cpuOf`), in memory or not.
  for (const name of registry.schema === undefined ? [] : ['registry', 'disk'].filter((each) => running[each] !== undefined)) {
    running[name].database = new pg.Client({ connectionString: options.postgres })
    await running[name].database.connect()
  }
  const warmups = Object.fromEntries(Object.entries(sets).map(([name, queries]) => [name, queries.slice(0, WARM_UP)]))
  const resultsOf = {}
  for (const name of servers) {
    const started = performance.now()
    resultsOf[name] = await warm(running[name], warmups)
    console.log(`${name}: warmed in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  }
  for (const [name, queries] of Object.entries(sets)) {
    console.log(`\n${name}: ${queries.slice(WARM_UP, WARM_UP + 4).map((query) => `\`${query}\``).join(', ')}; results a query (warm-up, up to 100): ${servers.map((server) => `${server} ${resultsOf[server][name]}`).join(', ')}`)
  }

  for (const [name, queries] of Object.entries(sets)) {
    const rows = []
    const load = loadAverage()
    for (const [at, connections] of connectionCounts.entries()) {
      for (const server of servers) rows.push({ server, connections, ...(await measure(running[server], sliceOf(queries, at), connections)) })
    }
    console.log(`\n**${name}** (${total.toLocaleString('en')} entities, ${duration} s each, ${sliceLength} queries a measurement at most; load average ${load} before, ${loadAverage()} after)\n`)
    // The rates' ratio depends on what else loads the machine; the CPU's (the floor's a query over this one's) does not as much.
    console.log('| server | connections | q/s | p50 | p99 | CPU a query | ratio to the floor: q/s | CPU |\n|---|---|---|---|---|---|---|---|')
    for (const row of rows) {
      const floor = rows.find((other) => other.server === 'floor' && other.connections === row.connections)
      const ratio = floor === undefined || row === floor ? ' | ' : `${(row.rate / floor.rate).toFixed(3)} | ${(floor.cpu / row.cpu).toFixed(3)}`
      const failed = [...row.failures].map(([status, count]) => `, ${count} answered ${status}`).join('')
      const answered = row.exhausted || failed ? ` (${row.exhausted ? 'all ' : ''}${row.answered}${failed})` : ''
      console.log(`| ${{ registry: registry.label, disk: registry.schema === undefined ? 'registry (LanceDB on disk alone)' : 'registry (inside PostgreSQL alone)', floor: 'floor (FTS5)' }[row.server]} | ${row.connections} | ${row.rate.toFixed(1)}${answered} | ${row.p50.toFixed(1)} ms | ${row.p99.toFixed(1)} ms | ${row.cpu.toFixed(2)} ms | ${ratio} |`)
    }
  }
  for (const [name, server] of Object.entries(running)) console.log(`${name}: after the measurements, ${memoryOf(server.pid)}`)
} finally {
  for (const server of Object.values(running)) {
    server.stop()
    await server.database?.end()
  }
}
