// Facet counts (`/v1/facets`) at 1,000,000 entities on SQLite, through `registry.fetch` in-process:
// the first answer for a filter (counted: each registry here is new, so nothing is kept) and the
// answers after it while the feed does not move (kept by feed head). Fields: all five.
//   node bench/facets.mjs [--write]
// --write puts the table into bench/README.md between its "bench/facets.mjs" markers.
import { parseArgs } from 'node:util'
import { benchRegistry, entities1m, machine, ms, time, writeReadmeSection } from './lib.mjs'

const { values: options } = parseArgs({ options: { write: { type: 'boolean', default: false } } })
const store = await entities1m()
const filters = {
  'no filter': '',
  'type:person (60%)': 'type:person',
  'type:person jurisdiction:US-WA (1.2%)': 'type:person jurisdiction:US-WA',
  'status:former jurisdiction:US-CA (0.7%)': 'status:former jurisdiction:US-CA',
  'type:committee displayDate:2000..2002-12-31 (reads the 100,000 committees)': 'type:committee displayDate:2000..2002-12-31',
  'displayDate:2000..2002-12-31 (would read 1,000,000: refused, 400)': 'displayDate:2000..2002-12-31',
}
const path = (filter) => `/v1/facets${filter === '' ? '' : `?filter=${encodeURIComponent(filter)}`}`
const rows = []
for (const [name, filter] of Object.entries(filters)) {
  const probe = await benchRegistry(store)(path(filter))
  const { meta } = await probe.json()
  if (probe.status !== 200) {
    // Refused before reading: timed as the answer it gets.
    const refused = await time(20, () => benchRegistry(store)(path(filter)), probe.status)
    rows.push(`| ${name} | - | ${ms(refused.p50)} | ${ms(refused.max)} | - | - |`)
  } else {
    const counted = await time(5, () => benchRegistry(store)(path(filter)))
    const send = benchRegistry(store)
    const kept = await time(200, () => send(path(filter)))
    rows.push(`| ${name} | ${meta.total.toLocaleString('en')} | ${ms(counted.p50)} | ${ms(counted.max)} | ${ms(kept.p50)} | ${ms(kept.p95)} |`)
  }
  console.log(rows.at(-1))
}
await store.close()
const lines = [
  `1,000,000 entities on SQLite (\`entities1m\`), every facet field; ${machine()}; ${new Date().toISOString().slice(0, 10)}.`,
  '',
  '| filter | total | counted: p50 | counted: max | kept: p50 | kept: p95 |',
  '|---|---|---|---|---|---|',
  ...rows,
]
console.log(lines.join('\n'))
if (options.write) writeReadmeSection('bench/facets.mjs', lines)

