// Resident memory of a serving process over 1,000,000 requests: `entity-registry serve` over the
// bench/http.mjs data set (run that first), loaded by autocannon with a mix of list pages, filtered
// pages and gets by id; RSS sampled every 5 s. Flat means the last samples are within a few MB of
// those after warm-up.
//   node bench/steady-memory.mjs [--requests 1000000]
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { DATA_DIR, idOf, KEY, machine, ROOT, startServer } from './lib.mjs'

const { values: options } = parseArgs({ options: { requests: { type: 'string', default: '1000000' }, entities: { type: 'string', default: '300000' } } })
const data = join(DATA_DIR, `http-${options.entities}`)
if (!existsSync(data)) throw new Error(`${data} is missing: run bench/http.mjs first`)
const server = await startServer(process.execPath, [join(ROOT, 'dist/cli/main.js'), 'serve', '--data', data, '--api-key', KEY, '--rate-limit', '0', '--search', 'none', '--port', '0'])
const { url } = server
const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))[1]) / 1024
const samples = []
const sampler = setInterval(() => samples.push(rss()), 5000)
let n = 0
const paths = ['/v1/entities?page[limit]=100', '/v1/entities?filter=type:person%20jurisdiction:US-WA&page[limit]=100']
const result = await autocannon({
  url,
  connections: 10,
  amount: Number(options.requests),
  headers: { Authorization: `Bearer ${KEY}` },
  // Four gets by id (each another entity) to one page.
  requests: [{ setupRequest: (request) => ({ ...request, path: n++ % 5 < 4 ? `/v1/entities/${idOf((n * 7919) % Number(options.entities))}` : paths[n % 2] }) }],
})
clearInterval(sampler)
server.stop()
const mb = (value) => `${value.toFixed(0)} MB`
const warm = samples[Math.min(2, samples.length - 1)]
console.log(`machine: ${machine()}`)
console.log(`${result.requests.total.toLocaleString('en')} requests (${result.non2xx} not 2xx, ${result.errors} errors) in ${result.duration} s; RSS after warm-up (10 s) ${mb(warm)}, at the end ${mb(samples.at(-1))}, highest ${mb(Math.max(...samples))}`)
console.log(`samples (MB, every 5 s): ${samples.map((value) => value.toFixed(0)).join(' ')}`)
