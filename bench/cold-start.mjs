// Cold start: from spawning `entity-registry serve` to its first answered request (a list page),
// over the demo data already imported; the median of 7. Beside it, the same for a node:http server
// answering fixed bytes (what Node itself costs) and the registry's imports alone.
//   node bench/cold-start.mjs
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { machine, ROOT as root, startServer } from './lib.mjs'

const cli = join(root, 'dist/cli/main.js')
const KEY = 'bench-key'
const data = mkdtempSync(join(tmpdir(), 'er-cold-'))
spawnSync(process.execPath, [cli, 'import', '--data', data, join(root, 'demo/entities.jsonl')], { stdio: 'ignore' })

/** Milliseconds from spawn to the first answer of `path`. */
async function coldStart(args, path) {
  const started = performance.now()
  const server = await startServer(process.execPath, args)
  const response = await fetch(server.url + path, { headers: { Authorization: `Bearer ${KEY}` } })
  await response.arrayBuffer()
  const elapsed = performance.now() - started
  server.stop()
  if (response.status !== 200) throw new Error(`status ${response.status}`)
  return elapsed
}

const floor = `require('node:http').createServer((q, s) => s.end('{}')).listen(0, '127.0.0.1', function () { console.log('listening on http://127.0.0.1:' + this.address().port) })`
const cases = {
  'node:http, fixed bytes': [['-e', floor], '/'],
  'entity-registry serve, search off': [[cli, 'serve', '--data', data, '--api-key', KEY, '--port', '0', '--search', 'none'], '/v1/entities?page[limit]=10'],
  'entity-registry serve (search on)': [[cli, 'serve', '--data', data, '--api-key', KEY, '--port', '0'], '/v1/entities?page[limit]=10'],
}
console.log(`machine: ${machine()}\n\n| process | first answer, median of 7 | min | max |\n|---|---|---|---|`)
for (const [name, [args, path]] of Object.entries(cases)) {
  const times = []
  for (let run = 0; run < 7; run++) times.push(await coldStart(args, path))
  times.sort((a, b) => a - b)
  console.log(`| ${name} | ${times[3].toFixed(0)} ms | ${times[0].toFixed(0)} ms | ${times[6].toFixed(0)} ms |`)
}
rmSync(data, { recursive: true, force: true })
