// Two builds of `entity-registry serve` side by side and nothing else: this checkout's and the one in
// --baseline DIR (its dist/), over http.mjs's data set, loaded in turn by autocannon (10 connections),
// the order swapped each round, the first round a warm-up. Where http.mjs --baseline is not to be
// trusted (SQLite's get by id: the same build on both sides of it gave 25 and 30 us a request,
// bench/README.md), a pair of servers alone is.
//   node bench/ab.mjs --baseline DIR [--path /v1/entities/e02n9c] [--rounds 9] [--duration 2] [--entities 300000] [--postgres URL]
// Needs http.mjs's data set (`node bench/http.mjs --only get [--postgres URL]` builds it).
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { benchServeArgs, DATA_DIR, httpSchemaOf, inSchema, KEY, machine, processCpuMicros, ROOT, startServer } from './lib.mjs'

const { values: options } = parseArgs({
  options: {
    baseline: { type: 'string' },
    path: { type: 'string', default: '/v1/entities/e02n9c' },
    rounds: { type: 'string', default: '9' },
    duration: { type: 'string', default: '2' },
    entities: { type: 'string', default: '300000' },
    postgres: { type: 'string' },
  },
})
if (options.baseline === undefined) throw new Error('--baseline DIR: the checkout whose dist/ to compare with')
const data = join(DATA_DIR, `http-${options.entities}${options.postgres === undefined ? '' : '-postgres'}`)
if (!existsSync(data)) throw new Error(`no ${data}: run node bench/http.mjs --only get${options.postgres === undefined ? '' : ' --postgres URL'} first`)
const database = options.postgres === undefined ? [] : ['--database', inSchema(options.postgres, httpSchemaOf(Number(options.entities)))]

/** `entity-registry serve` as built in the checkout at `checkout`, as http.mjs starts it. */
const serve = (checkout) => startServer(process.execPath, benchServeArgs(checkout, data, database))

const servers = { baseline: await serve(options.baseline), 'this build': await serve(ROOT) }
try {
  const runs = { baseline: [], 'this build': [] }
  for (let round = 0; round < Number(options.rounds); round++) {
    for (const name of round % 2 === 0 ? ['baseline', 'this build'] : ['this build', 'baseline']) {
      const { url, pid } = servers[name]
      const before = processCpuMicros(pid)
      const result = await autocannon({ url: url + options.path, connections: 10, duration: Number(options.duration), headers: { Authorization: `Bearer ${KEY}` } })
      if (result.non2xx > 0 || result.errors > 0) throw new Error(`${options.path}: ${result.non2xx} non-2xx answers, ${result.errors} errors`)
      if (round > 0) runs[name].push({ rate: result.requests.average, cpu: (processCpuMicros(pid) - before) / result.requests.total })
    }
  }
  const mean = (list, key) => list.reduce((sum, run) => sum + run[key], 0) / list.length
  console.log(`GET ${options.path} on ${options.postgres === undefined ? 'SQLite' : 'PostgreSQL'}; ${machine()}; ${Number(options.rounds) - 1} rounds of ${options.duration} s after a warm-up, the order swapped each round`)
  for (const [name, list] of Object.entries(runs)) console.log(`${name}: ${Math.round(mean(list, 'rate')).toLocaleString('en')} req/s, ${mean(list, 'cpu').toFixed(1)} us of CPU a request`)
} finally {
  for (const server of Object.values(servers)) server.stop()
}
