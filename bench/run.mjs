// Runs every benchmark in turn: `npm run bench` (builds first). Data sets are built once into bench/.data.
import { spawnSync } from 'node:child_process'
import { machine } from './lib.mjs'

console.log(`machine: ${machine()}`)
// http.mjs first: steady-memory.mjs serves the data set it builds.
for (const script of ['http.mjs', 'cold-start.mjs', 'steady-memory.mjs', 'list-entities.mjs', 'changes.mjs', 'worst-filter.mjs']) {
  const run = spawnSync(process.execPath, [new URL(script, import.meta.url).pathname], { stdio: 'inherit' })
  if (run.status !== 0) process.exit(run.status ?? 1)
}
