// What a user gets over HTTP, side by side in one run: entity-registry as `entity-registry serve`
// runs it (Node adapter, SQLite, API key checked, rate limit and search off), a hand-written floor
// (node:http, one prepared better-sqlite3 statement a request kind, stored JSON concatenated) and
// Fastify with the same queries, each in its own process over the same data. autocannon in this
// process, 10 connections; the servers are interleaved request kind by request kind, round by round.
//   node bench/http.mjs [--entities 300000] [--duration 5] [--rounds 2] [--write]
// --write puts the table into bench/README.md between its "bench/http.mjs" markers.
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { createSqliteStore } from '../dist/kysely/index.js'
import { createFileBlobStore, importNdjson } from '../dist/node/index.js'
import { applyInBatches, DATA_DIR, idOf, KEY, machine, recordOf } from './lib.mjs'

const { values: options } = parseArgs({
  options: {
    entities: { type: 'string', default: '300000' },
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '2' },
    write: { type: 'boolean', default: false },
  },
})
const total = Number(options.entities)
const root = new URL('..', import.meta.url).pathname

/** A data directory as `serve --data` reads it: the demo data (renditions included), `total` synthetic entities, merges. */
async function dataDirectory() {
  const directory = join(DATA_DIR, `http-${total}`)
  if (existsSync(directory)) return directory
  const partial = `${directory}.partial`
  rmSync(partial, { recursive: true, force: true })
  mkdirSync(partial, { recursive: true })
  const store = await createSqliteStore({ file: join(partial, 'registry.sqlite') })
  const demo = join(root, 'demo/entities.jsonl')
  await importNdjson(readFileSync(demo, 'utf8').split('\n'), { warehouse: store.warehouse, blobs: createFileBlobStore(join(partial, 'blobs')), baseDir: join(root, 'demo') })
  await applyInBatches(store.warehouse, total, (n) => ({ op: 'upsert', record: recordOf(n) }))
  // Entity 1 merged into 2, 2 into 3: a get of 1 follows two merges.
  for (const [source, target] of [[2, 3], [1, 2]]) await store.warehouse.merge(idOf(source), idOf(target))
  await store.close()
  renameSync(partial, directory)
  return directory
}

function start(args) {
  const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] })
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)))
    let output = ''
    child.stdout.on('data', (chunk) => {
      output += chunk
      const match = /listening on (http:\/\/\S+)/.exec(output)
      if (match) resolve({ url: match[1], pid: child.pid, stop: () => child.kill() })
    })
  })
}

/** User plus system CPU time of a process so far, in microseconds (Linux). */
function cpuMicros(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100
}

async function load(server, path, duration) {
  const before = cpuMicros(server.pid)
  const result = await autocannon({ url: server.url + path, connections: 10, duration, headers: { Authorization: `Bearer ${KEY}` } })
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${path}: ${result.non2xx} non-2xx answers, ${result.errors} errors`)
  return { rate: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, cpu: (cpuMicros(server.pid) - before) / result.requests.total }
}

const data = await dataDirectory()
const servers = {
  floor: await start([join(root, 'bench/servers/floor.mjs'), data]),
  Fastify: await start([join(root, 'bench/servers/floor.mjs'), data, '--fastify']),
  'entity-registry': await start([join(root, 'dist/cli/main.js'), 'serve', '--data', data, '--api-key', KEY, '--rate-limit', '0', '--search', 'none', '--port', '0']),
}
try {
  const bill = await (await fetch(`${servers['entity-registry'].url}/v1/entities/hr3590111`, { headers: { Authorization: `Bearer ${KEY}` } })).json()
  const rendition = bill.data.attributes.texts[0].renditions[0].links.content
  const kinds = {
    'list, page 1': '/v1/entities?page[limit]=100',
    'list, type:person jurisdiction:US-WA': '/v1/entities?filter=type:person%20jurisdiction:US-WA&page[limit]=100',
    [`list, deep page (after ${Math.round(total * 0.9).toLocaleString('en')})`]: `/v1/entities?page[after]=${idOf(Math.round(total * 0.9))}&page[limit]=100`,
    'get by id': `/v1/entities/${idOf(123_456 % total)}`,
    'get merged (two hops)': `/v1/entities/${idOf(1)}`,
    'changes, type:committee jurisdiction:US-WA (0.2%)': '/v1/entities/changes?filter=type:committee%20jurisdiction:US-WA&page[limit]=100',
    'rendition download (HTML)': new URL(rendition).pathname,
  }
  const duration = Number(options.duration)
  const results = {}
  for (let round = 0; round < Number(options.rounds); round++) {
    for (const [kind, path] of Object.entries(kinds)) {
      for (const [name, server] of Object.entries(servers)) {
        if (round === 0) await load(server, path, 1) // warm-up
        ;((results[kind] ??= {})[name] ??= []).push(await load(server, path, duration))
        process.stdout.write('.')
      }
    }
  }
  const mean = (runs, key) => runs.reduce((sum, run) => sum + run[key], 0) / runs.length
  const lines = [
    `${total.toLocaleString('en')} synthetic entities and the demo data; ${machine()}; ${new Date().toISOString().slice(0, 10)};`,
    `autocannon, 10 connections, ${options.rounds} interleaved rounds of ${duration} s (means).`,
    '',
    '| request | server | req/s | p50 | p99 | CPU / request | req/s / floor |',
    '|---|---|---|---|---|---|---|',
  ]
  for (const [kind, byServer] of Object.entries(results)) {
    const floorRate = mean(byServer.floor, 'rate')
    for (const [name, runs] of Object.entries(byServer)) {
      const rate = mean(runs, 'rate')
      lines.push(`| ${kind} | ${name} | ${Math.round(rate).toLocaleString('en')} | ${mean(runs, 'p50').toFixed(1)} ms | ${mean(runs, 'p99').toFixed(1)} ms | ${Math.round(mean(runs, 'cpu'))} us | ${(rate / floorRate).toFixed(2)} |`)
    }
  }
  const table = lines.join('\n')
  console.log(`\n${table}`)
  if (options.write) {
    const readme = join(root, 'bench/README.md')
    const marker = (end) => `<!-- bench/http.mjs sqlite ${end} -->`
    const text = readFileSync(readme, 'utf8')
    const [before, rest] = text.split(marker('start'))
    if (rest === undefined) throw new Error('bench/README.md has no bench/http.mjs markers')
    writeFileSync(readme, `${before}${marker('start')}\n${table}\n${marker('end')}${rest.split(marker('end'))[1]}`)
  }
} finally {
  for (const server of Object.values(servers)) server.stop()
}
