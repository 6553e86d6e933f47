// What a user gets over HTTP, side by side in one run: entity-registry as `entity-registry serve`
// runs it (Node adapter, API key checked, a rate limit no run reaches, search off), a hand-written
// floor (node:http, one prepared statement a request kind, stored JSON concatenated), Fastify with
// the same queries, and the contract peer (servers/fastify-contract.mjs: Fastify with the same
// contract: key, CORS, rate limit, links, feed head), each in its own process over the same data.
// Request logs are off in both that have them (`--log warn`; Fastify's logger is off unless asked). On SQLite by default (better-sqlite3 in
// the floor); with --postgres on that server (a `pg` Pool of 10 with named prepared statements in
// the floor, `serve --database` for the registry, whose pool is `pg`'s default of 10 too). autocannon
// in this process, 10 connections; the servers are interleaved request kind by request kind, round by round.
//   node bench/http.mjs [--entities 300000] [--duration 5] [--rounds 2] [--postgres postgres://…] [--only get] [--baseline DIR] [--without-rate-limit] [--floor-with-links] [--write]
// --only runs the request kinds whose name holds that text (and refuses --write).
// --baseline DIR serves the entity-registry built in another checkout (DIR/dist) too, beside this one's,
// interleaved with the rest: an A/B of two builds in one run (and refuses --write).
// --without-rate-limit serves this build without its rate limit too, beside the one with it: the limiter's cost.
// --floor-with-links serves the floor a second time with the links a list page of the contract carries
// (floor.mjs --links): what those bytes cost.
// The data set is built once: under bench/.data, and with --postgres in the schema bench_http_<entities>
// of that database (the blobs still in a directory under bench/.data); drop it to rebuild.
// --pgbouncer (with --postgres) serves this build a second time through a PgBouncer of the bench's own in
// transaction mode (/usr/sbin/pgbouncer, 10 server connections as the registry's pool holds), beside
// the direct one, and prints the ratio of the two; it connects as a role of the data set's schema
// name whose search_path is that schema (PgBouncer refuses the `options` a direct URL sets it with);
// with --baseline, the baseline is served through it too.
// PgBouncer's own CPU is in neither CPU column. It refuses --write.
// --write puts the table into bench/README.md between its "bench/http.mjs sqlite" (or "postgres") markers.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import pg from 'pg'
import { createPostgresStore, createSqliteStore } from '../dist/kysely/index.js'
import { createFileBlobStore, importNdjson } from '../dist/node/index.js'
import { applyInBatches, benchServeArgs, contractPeerArgs, DATA_DIR, floorArgs, httpSchemaOf, idOf, inSchema, KEY, machine, processCpuMicros, procStatOf, RATE_LIMIT, recordOf, ROOT as root, startServer, throughPgBouncer } from './lib.mjs'

const { values: options } = parseArgs({
  options: {
    entities: { type: 'string', default: '300000' },
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '2' },
    postgres: { type: 'string' },
    write: { type: 'boolean', default: false },
    only: { type: 'string' },
    baseline: { type: 'string' },
    'without-rate-limit': { type: 'boolean', default: false },
    'floor-with-links': { type: 'boolean', default: false },
    pgbouncer: { type: 'boolean', default: false },
  },
})
const total = Number(options.entities)

/** The data set of every run, into `store` (blobs under `directory`): the demo data (renditions included), `total` synthetic entities, merges. */
async function buildDataSet(store, directory) {
  const demo = join(root, 'demo/entities.jsonl')
  await importNdjson(readFileSync(demo, 'utf8').split('\n'), { warehouse: store.warehouse, blobs: createFileBlobStore(join(directory, 'blobs')), baseDir: join(root, 'demo') })
  await applyInBatches(store.warehouse, total, (n) => ({ op: 'upsert', record: recordOf(n) }))
  // Entity 1 merged into 2, 2 into 3: a get of 1 follows two merges.
  for (const [source, target] of [[2, 3], [1, 2]]) await store.warehouse.merge(idOf(source), idOf(target))
}

/** A directory built by `build(partial)` once; an interrupted build is not kept. */
async function cachedDirectory(name, build) {
  const directory = join(DATA_DIR, name)
  if (existsSync(directory)) return directory
  const partial = `${directory}.partial`
  rmSync(partial, { recursive: true, force: true })
  mkdirSync(partial, { recursive: true })
  await build(partial)
  renameSync(partial, directory)
  return directory
}

/** A data directory as `serve --data` reads it. */
function sqliteData() {
  return cachedDirectory(`http-${total}`, async (partial) => {
    const store = await createSqliteStore({ file: join(partial, 'registry.sqlite') })
    await buildDataSet(store, partial)
    await store.close()
  })
}

/**
 * The same data set in the schema bench_http_<total> of the server at `url` (built once, in a
 * schema renamed when complete) and a directory of its blobs: { data, database, version, postmaster }.
 */
async function postgresData(url) {
  const schema = httpSchemaOf(total)
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  try {
    const exists = async (name) => (await admin.query('select 1 from pg_namespace where nspname = $1', [name])).rowCount > 0
    const name = `http-${total}-postgres`
    if (!(await exists(schema))) rmSync(join(DATA_DIR, name), { recursive: true, force: true })
    const data = await cachedDirectory(name, async (partial) => {
      const building = `${schema}_partial`
      await admin.query(`drop schema if exists ${building} cascade`)
      await admin.query(`create schema ${building}`)
      const store = await createPostgresStore({ connectionString: inSchema(url, building) })
      await buildDataSet(store, partial)
      await store.close()
      // What autovacuum would get to in its own time: statistics, and a visibility map for index-only scans.
      for (const table of ['entities', 'changes']) await admin.query(`vacuum analyze ${building}.${table}`)
      await admin.query(`drop schema if exists ${schema} cascade`) // left without its blobs
      await admin.query(`alter schema ${building} rename to ${schema}`)
    })
    const version = (await admin.query('show server_version')).rows[0].server_version
    // The server's CPU time is read from /proc when it runs on this machine.
    const backend = (await admin.query('select pg_backend_pid() as pid')).rows[0].pid
    const local = existsSync(`/proc/${backend}/comm`) && readFileSync(`/proc/${backend}/comm`, 'utf8').startsWith('postgres')
    const postmaster = local ? Number(procStatOf(backend)[1]) : undefined
    return { data, database: inSchema(url, schema), version: version.split(' ')[0], postmaster }
  } finally {
    await admin.end()
  }
}


/**
 * CPU time of the whole PostgreSQL server so far, in microseconds: the postmaster, its live
 * processes (backends, background workers) and those that ended (its children's times). Every
 * session's work, others' too, so a run should have the server to itself. A backend reaped during
 * the scan (a pool closing an idle connection) would be missed: then the scan is repeated.
 */
function serverCpuMicros(postmaster) {
  const ended = () => {
    const fields = procStatOf(postmaster)
    return Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])
  }
  for (;;) {
    const before = ended()
    let ticks = 0
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue
      try {
        const child = procStatOf(entry)
        if (child[1] === String(postmaster)) ticks += Number(child[11]) + Number(child[12])
      } catch {
        // ended meanwhile: its time is in the postmaster's children's times now
      }
    }
    if (ended() === before) return ((before + ticks) * 1e6) / 100
  }
}

/** `path`: a request's path, or a function giving each request's. */
async function load(server, path, duration) {
  const postmaster = postgres?.postmaster
  const before = processCpuMicros(server.pid)
  const databaseBefore = postmaster === undefined ? 0 : serverCpuMicros(postmaster)
  const target =
    typeof path === 'function' ? { url: server.url, requests: [{ setupRequest: (request) => ({ ...request, path: path() }) }] } : { url: server.url + path }
  const result = await autocannon({ ...target, connections: 10, duration, headers: { Authorization: `Bearer ${KEY}` } })
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${path}: ${result.non2xx} non-2xx answers, ${result.errors} errors`)
  const cpu = (processCpuMicros(server.pid) - before) / result.requests.total
  const databaseCpu = postmaster === undefined ? 0 : (serverCpuMicros(postmaster) - databaseBefore) / result.requests.total
  return { rate: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, cpu, databaseCpu }
}

const postgres = options.postgres === undefined ? undefined : await postgresData(options.postgres)
const data = postgres?.data ?? (await sqliteData())
const database = postgres === undefined ? [] : ['--database', postgres.database]
/** `entity-registry serve` as built in the checkout at `checkout`. */
const registryServer = (checkout, rateLimit = RATE_LIMIT) => startServer(process.execPath, benchServeArgs(checkout, data, database, rateLimit))
if (options.baseline !== undefined && options.write) throw new Error('--baseline adds a row to the table: it cannot --write it')
if (options['without-rate-limit'] && options.write) throw new Error('--without-rate-limit adds a row to the table: it cannot --write it')
if (options['floor-with-links'] && options.write) throw new Error('--floor-with-links adds a row to the table: it cannot --write it')
if (options.pgbouncer && (options.write || postgres === undefined)) throw new Error('--pgbouncer adds a row to the table of --postgres: it needs --postgres and cannot --write it')
const bouncer = options.pgbouncer ? await throughPgBouncer(options.postgres, httpSchemaOf(total)) : undefined

const servers = {
  floor: await startServer(process.execPath, floorArgs(data, database)),
  Fastify: await startServer(process.execPath, floorArgs(data, database, '--fastify')),
  ...(options['floor-with-links'] ? { 'floor, with links': await startServer(process.execPath, floorArgs(data, database, '--links')) } : {}),
  'Fastify, contract': await startServer(process.execPath, contractPeerArgs(data, database)),
  ...(options.baseline === undefined ? {} : { 'entity-registry, baseline': await registryServer(options.baseline) }),
  ...(options['without-rate-limit'] ? { 'entity-registry, no rate limit': await registryServer(root, '0') } : {}),
  'entity-registry': await registryServer(root),
  ...(bouncer === undefined ? {} : { 'entity-registry, through PgBouncer': await startServer(process.execPath, benchServeArgs(root, data, ['--database', bouncer.database])) }),
  ...(bouncer === undefined || options.baseline === undefined
    ? {}
    : { 'entity-registry, baseline, through PgBouncer': await startServer(process.execPath, benchServeArgs(options.baseline, data, ['--database', bouncer.database])) }),
}
try {
  const bill = await (await fetch(`${servers['entity-registry'].url}/v1/entities/hr3590111`, { headers: { Authorization: `Bearer ${KEY}` } })).json()
  const rendition = bill.data.attributes.texts[0].renditions[0].links.content
  const kinds = {
    'list, page 1': '/v1/entities?page[limit]=100',
    'list, type:person jurisdiction:US-WA': '/v1/entities?filter=type:person%20jurisdiction:US-WA&page[limit]=100',
    [`list, deep page (after ${Math.round(total * 0.9).toLocaleString('en')})`]: `/v1/entities?page[after]=${idOf(Math.round(total * 0.9))}&page[limit]=100`,
    'get by id': `/v1/entities/${idOf(123_456 % total)}`,
    // Past the merged ones (1 to 3): each request another entity, as a crawler's or a mirror's.
    'get by id, ids at random': () => `/v1/entities/${idOf(4 + Math.floor(Math.random() * (total - 4)))}`,
    'get merged (two hops)': `/v1/entities/${idOf(1)}`,
    'changes, type:committee jurisdiction:US-WA (0.2%)': '/v1/entities/changes?filter=type:committee%20jurisdiction:US-WA&page[limit]=100',
    'rendition download (HTML)': new URL(rendition).pathname,
  }
  if (options.only !== undefined) {
    if (options.write) throw new Error('--only measures part of the table: it cannot --write it')
    for (const kind of Object.keys(kinds)) if (!kind.includes(options.only)) delete kinds[kind]
  }
  const duration = Number(options.duration)
  const results = {}
  for (let round = 0; round < Number(options.rounds); round++) {
    for (const [kind, path] of Object.entries(kinds)) {
      // Every other round in the reverse order: a server measured after another is not always after
      // the same one (through PgBouncer, the first server after a direct one served some 20 % less).
      const inOrder = Object.entries(servers)
      for (const [name, server] of round % 2 === 0 ? inOrder : inOrder.reverse()) {
        if (round === 0) await load(server, path, 1) // warm-up
        ;((results[kind] ??= {})[name] ??= []).push(await load(server, path, duration))
        process.stdout.write('.')
      }
    }
  }
  const mean = (runs, key) => runs.reduce((sum, run) => sum + run[key], 0) / runs.length
  const lines = [
    `${total.toLocaleString('en')} synthetic entities and the demo data${postgres === undefined ? ' on SQLite' : ` on PostgreSQL ${postgres.version} (same machine, default settings)`}; ${machine()}; ${new Date().toISOString().slice(0, 10)};`,
    `autocannon, 10 connections, ${options.rounds} interleaved rounds of ${duration} s (means).`,
    '',
  ]
  // With a local PostgreSQL: the server's CPU time too (every process of it), as the Node process's is.
  const database = postgres?.postmaster !== undefined
  if (database) lines[1] += ' CPU / request: the Node process serving; PostgreSQL: the database server\'s processes, all of them.'
  lines.push(`| request | server | req/s | p50 | p99 | CPU / request |${database ? ' PostgreSQL CPU / request |' : ''} req/s / floor | req/s / contract peer |`)
  lines.push(`|---|---|---|---|---|---|${database ? '---|' : ''}---|---|`)
  for (const [kind, byServer] of Object.entries(results)) {
    const floorRate = mean(byServer.floor, 'rate')
    const peerRate = mean(byServer['Fastify, contract'], 'rate')
    for (const [name, runs] of Object.entries(byServer)) {
      const rate = mean(runs, 'rate')
      lines.push(`| ${kind} | ${name} | ${Math.round(rate).toLocaleString('en')} | ${mean(runs, 'p50').toFixed(1)} ms | ${mean(runs, 'p99').toFixed(1)} ms | ${Math.round(mean(runs, 'cpu'))} us |${database ? ` ${Math.round(mean(runs, 'databaseCpu'))} us |` : ''} ${(rate / floorRate).toFixed(2)} | ${(rate / peerRate).toFixed(2)} |`)
    }
  }
  const table = lines.join('\n')
  console.log(`\n${table}`)
  if (bouncer !== undefined) {
    const ratio = (kind, byServer, name, direct) => `${kind} ${(mean(byServer[name], 'rate') / mean(byServer[direct], 'rate')).toFixed(2)}`
    const ratios = Object.entries(results).map(([kind, byServer]) => ratio(kind, byServer, 'entity-registry, through PgBouncer', 'entity-registry'))
    console.log(`\nreq/s through PgBouncer / direct: ${ratios.join('; ')}`)
    if (options.baseline !== undefined) {
      const before = Object.entries(results).map(([kind, byServer]) => ratio(kind, byServer, 'entity-registry, baseline, through PgBouncer', 'entity-registry, baseline'))
      console.log(`the baseline's, through PgBouncer / direct: ${before.join('; ')}`)
    }
  }
  if (options.write) {
    const readme = join(root, 'bench/README.md')
    const marker = (end) => `<!-- bench/http.mjs ${postgres === undefined ? 'sqlite' : 'postgres'} ${end} -->`
    const text = readFileSync(readme, 'utf8')
    const [before, rest] = text.split(marker('start'))
    if (rest === undefined) throw new Error(`bench/README.md has no ${marker('start')} marker`)
    writeFileSync(readme, `${before}${marker('start')}\n${table}\n${marker('end')}${rest.split(marker('end'))[1]}`)
  }
} finally {
  for (const server of Object.values(servers)) server.stop()
  await bouncer?.server.stop()
}
