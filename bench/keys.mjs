// What a stored API key costs a request, over HTTP: one `entity-registry serve` over the demo data
// (SQLite, rate limit and search off), a get by id sent with a configured key (`--api-key`, compared
// in the process) and with a key made by `keys create` (kept hashed in the store, its lookup cached
// for 5 s), interleaved round by round. Also: the same request with a key that has never existed,
// well-formed (a cached store lookup) and malformed (refused by its checksum, no lookup).
//   node bench/keys.mjs [--duration 5] [--rounds 3] [--write]
// --write puts the table into bench/README.md between its "bench/keys.mjs" markers.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { generateApiKey } from '../dist/index.js'
import { KEY, machine, processCpuMicros, ROOT, startServer, writeReadmeSection } from './lib.mjs'

const { values: options } = parseArgs({
  options: { duration: { type: 'string', default: '5' }, rounds: { type: 'string', default: '3' }, write: { type: 'boolean', default: false } },
})
const duration = Number(options.duration)
const cli = join(ROOT, 'dist/cli/main.js')
const data = mkdtempSync(join(tmpdir(), 'er-bench-keys-'))
const stored = execFileSync(process.execPath, [cli, 'keys', 'create', '--org', 'bench', '--data', data], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
const server = await startServer(process.execPath, [cli, 'serve', '--demo', '--data', data, '--api-key', KEY, '--rate-limit', '0', '--auth-failure-limit', '0', '--search', 'none', '--log', 'warn', '--port', '0'])
const cpuMicros = () => processCpuMicros(server.pid)

const keys = {
  'configured key (--api-key)': { key: KEY, status: 200 },
  'stored key (keys create)': { key: stored, status: 200 },
  'unknown well-formed key': { key: generateApiKey(), status: 401 },
  'malformed key': { key: 'er_not-a-key', status: 401 },
}
const path = '/v1/entities/hr3590111'
try {
  const results = {}
  for (let round = 0; round < Number(options.rounds); round++) {
    for (const [name, { key, status }] of Object.entries(keys)) {
      const run = (seconds) => autocannon({ url: server.url + path, connections: 10, duration: seconds, headers: { Authorization: `Bearer ${key}` } })
      if (round === 0) await run(1) // warm-up
      const before = cpuMicros()
      const result = await run(duration)
      const answered = status === 200 ? result['2xx'] : result['4xx']
      if (answered !== result.requests.total || result.errors > 0) throw new Error(`${name}: ${result.requests.total - answered} answers other than ${status}`)
      ;(results[name] ??= []).push({ rate: result.requests.average, p50: result.latency.p50, cpu: (cpuMicros() - before) / result.requests.total })
      process.stdout.write('.')
    }
  }
  process.stdout.write('\n')
  const mean = (runs, field) => runs.reduce((sum, run) => sum + run[field], 0) / runs.length
  const baseline = mean(results['configured key (--api-key)'], 'rate')
  const lines = [
    `GET ${path} (the demo data, SQLite); ${machine()}; ${new Date().toISOString().slice(0, 10)};`,
    `autocannon, 10 connections, ${options.rounds} interleaved rounds of ${duration} s (means).`,
    '',
    '| key sent | answer | req/s | p50 | CPU / request | req/s / configured key |',
    '|---|---|---|---|---|---|',
    ...Object.entries(results).map(
      ([name, runs]) =>
        `| ${name} | ${keys[name].status} | ${Math.round(mean(runs, 'rate')).toLocaleString('en')} | ${mean(runs, 'p50').toFixed(2)} ms | ${Math.round(mean(runs, 'cpu'))} us | ${(mean(runs, 'rate') / baseline).toFixed(2)} |`,
    ),
  ]
  console.log(lines.join('\n'))
  if (options.write) writeReadmeSection('bench/keys.mjs', lines)
} finally {
  server.stop()
  rmSync(data, { recursive: true, force: true })
}
