// Reads from a streaming replica: three `entity-registry serve` instances under load at once, over a
// PostgreSQL primary of the bench's own (initdb in a temporary directory, as the postgres OS user)
// and a hot standby of it (`pg_basebackup -R`, another port). Two layouts, interleaved round by round:
// "primary only", the three instances reading from the primary; and "two on the replica", two of them
// with `--read-database` on the replica, one on the primary. For each: the requests answered by each
// instance, and the CPU each PostgreSQL server spent (its processes' user and system time, /proc) per
// 1,000 requests: what moving reads to a replica takes off the primary.
//   node bench/replicas.mjs [--entities 20000] [--duration 5] [--rounds 2] [--write]
// Run as root (the servers run as the postgres OS user); --write puts the table into bench/README.md
// between its "bench/replicas.mjs" markers.
import { execFileSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { createPostgresStore } from '../dist/kysely/index.js'
import { applyInBatches, benchServeArgs, idOf, machine, procStatOf, recordOf, ROOT, startServer, writeReadmeSection } from './lib.mjs'

const { values: options } = parseArgs({
  options: {
    entities: { type: 'string', default: '20000' },
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '2' },
    write: { type: 'boolean', default: false },
  },
})
const duration = Number(options.duration)
const total = Number(options.entities)
const bin = join('/usr/lib/postgresql', readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a))[0], 'bin')
const postgresIds = ['-u', '-g'].map((flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim()))
const asPostgres = (command, args) => execFileSync('runuser', ['-u', 'postgres', '--', join(bin, command), ...args], { stdio: ['ignore', 'ignore', 'inherit'] })
const directory = mkdtempSync(join(tmpdir(), 'er-bench-replicas-'))
chownSync(directory, ...postgresIds)

/** A PostgreSQL server in `name` under the bench's directory, on `port`: its URL, data directory and stop. */
function startPostgres(name, port, make) {
  const data = join(directory, name)
  const sockets = join(directory, `${name}-sockets`)
  mkdirSync(sockets)
  chownSync(sockets, ...postgresIds)
  make(data)
  chmodSync(data, 0o700)
  const pgCtl = (...args) => asPostgres('pg_ctl', ['-D', data, '-l', join(directory, `${name}.log`), '-o', `-p ${port} -k ${sockets} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`, '-w', ...args])
  pgCtl('start')
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, data, stop: () => pgCtl('stop', '-m', 'immediate') }
}

/** User plus system CPU seconds of a PostgreSQL server's processes (the postmaster and its children), now. */
function serverCpuSeconds({ data }) {
  const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0])
  let ticks = 0
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const fields = procStatOf(entry)
      if (Number(entry) === postmaster || Number(fields[1]) === postmaster) ticks += Number(fields[11]) + Number(fields[12])
    } catch {
      // The process ended meanwhile.
    }
  }
  return ticks / 100
}

const stops = []
try {
  const basePort = 6700 + Math.floor(Math.random() * 200)
  const primary = startPostgres('primary', basePort, (data) => asPostgres('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']))
  stops.push(primary.stop)
  const store = await createPostgresStore({ connectionString: primary.url })
  await applyInBatches(store.warehouse, total, (n) => ({ op: 'upsert', record: recordOf(n) }))
  await store.close()
  const replica = startPostgres('replica', basePort + 1, (data) =>
    asPostgres('pg_basebackup', ['-h', '127.0.0.1', '-p', String(basePort), '-U', 'postgres', '-D', data, '-R', '-X', 'stream', '--checkpoint=fast', '--no-sync']),
  )
  stops.push(replica.stop)

  const serve = async (readFromReplica) => {
    const server = await startServer(process.execPath, [
      ...benchServeArgs(ROOT, mkdtempSync(join(directory, 'serve-')), ['--database', primary.url, ...(readFromReplica ? ['--read-database', replica.url] : [])]),
    ])
    stops.push(server.stop)
    return server
  }
  const layouts = {
    'primary only': [await serve(false), await serve(false), await serve(false)],
    'two on the replica': [await serve(true), await serve(true), await serve(false)],
  }
  const kinds = {
    'get by id': (n) => `/v1/entities/${idOf((n * 7919) % total)}`,
    'list page (100)': () => '/v1/entities?filter=type:person&page[limit]=100',
  }
  const results = {}
  const loads = []
  for (let round = 0; round < Number(options.rounds); round++) {
    for (const [kind, pathOf] of Object.entries(kinds)) {
      for (const [layout, servers] of Object.entries(layouts)) {
        const run = (seconds) =>
          Promise.all(servers.map((server, index) => autocannon({ url: server.url + pathOf(index + round), connections: 10, duration: seconds, headers: { Authorization: 'Bearer bench-key' } })))
        if (round === 0) await run(1) // warm-up
        const cpuBefore = [primary, replica].map(serverCpuSeconds)
        const answered = await run(duration)
        const [primaryCpu, replicaCpu] = [primary, replica].map((server, index) => serverCpuSeconds(server) - cpuBefore[index])
        for (const result of answered) if (result.non2xx > 0 || result.errors > 0) throw new Error(`${layout}, ${kind}: ${result.non2xx} answers other than 2xx, ${result.errors} errors`)
        loads.push(loadavg()[0])
        ;(results[`${kind}|${layout}`] ??= []).push({ rates: answered.map((result) => result.requests.average), requests: answered.reduce((sum, result) => sum + result.requests.total, 0), primaryCpu, replicaCpu })
        process.stdout.write('.')
      }
    }
  }
  process.stdout.write('\n')
  const mean = (values) => values.reduce((sum, value) => sum + value, 0) / values.length
  const perThousand = (runs, field) => ((1000 * runs.reduce((sum, run) => sum + run[field], 0)) / runs.reduce((sum, run) => sum + run.requests, 0)).toFixed(3)
  const lines = [
    `${total.toLocaleString('en')} entities; ${machine()}; ${new Date().toISOString().slice(0, 10)}; load average ${Math.min(...loads).toFixed(1)} to ${Math.max(...loads).toFixed(1)} (1 min) during the runs.`,
    `Three instances at once, autocannon with 10 connections each, ${options.rounds} interleaved rounds of ${duration} s (means).`,
    '',
    '| request | layout | req/s A | req/s B | req/s C (primary) | primary CPU s / 1,000 req | replica CPU s / 1,000 req |',
    '|---|---|---|---|---|---|---|',
    ...Object.entries(results).map(([key, runs]) => {
      const [kind, layout] = key.split('|')
      const rates = [0, 1, 2].map((index) => Math.round(mean(runs.map((run) => run.rates[index]))).toLocaleString('en'))
      return `| ${kind} | ${layout} | ${rates.join(' | ')} | ${perThousand(runs, 'primaryCpu')} | ${perThousand(runs, 'replicaCpu')} |`
    }),
  ]
  console.log(lines.join('\n'))
  if (options.write) writeReadmeSection('bench/replicas.mjs', lines)
} finally {
  for (const stop of stops.reverse()) {
    try {
      await stop()
    } catch {
      // Stopped already.
    }
  }
  if (existsSync(directory)) rmSync(directory, { recursive: true, force: true })
}
