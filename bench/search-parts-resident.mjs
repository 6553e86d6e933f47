// A whole search's CPU at 1,000,000 entities over `serve`'s index in memory (the resident index),
// and its parts, in this process: for each of search-cost.mjs's query sets, each query run through
// `createSearch` as `serve` makes it, one at a time (30 to warm up, then `--queries`), the process's
// CPU a search (`process.cpuUsage`) and that of the parts inside it: the resident index's `fullText`
// and `nearest` (their work is synchronous: timed from the call to its return, so that the two,
// asked together, are not counted in each other) and the store's read of the results by id
// (`getEntities`, with the ids it read).
//   node bench/search-parts-resident.mjs [--entities 1000000] [--queries 100] [--dist DIR] [--seed N]
// after `npm run build` and a first run of search-cost.mjs (which builds the data it reads).
// `--dist` measures another build (a checkout's dist/, for a before/after in one sitting).
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { catalogQuerySets, machine, openCatalogSearch, ROOT } from './lib.mjs'

const { values: options } = parseArgs({
  options: {
    entities: { type: 'string', default: '1000000' },
    queries: { type: 'string', default: '100' },
    dist: { type: 'string', default: join(ROOT, 'dist') },
    seed: { type: 'string', default: '11' },
  },
})
const total = Number(options.entities)
const { createSearch, parseGffs, embedder, store, resident, entities, milliseconds, nicknames, relatives } = await openCatalogSearch(total, options.dist)
const loadAverage = () => loadavg().map((load) => load.toFixed(2)).join(', ')
console.log(`${options.dist}: machine ${machine()}; ${entities.toLocaleString('en')} entities loaded in ${(milliseconds / 1000).toFixed(1)} s; load average ${loadAverage()}`)

const cpuMillis = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}
const parts = new Map()
const count = (name, milliseconds, ids = 0) => {
  const part = parts.get(name) ?? { milliseconds: 0, calls: 0, ids: 0 }
  parts.set(name, { milliseconds: part.milliseconds + milliseconds, calls: part.calls + 1, ids: part.ids + ids })
}
/** `call` timed from its call to its return: the resident index's work is done by then. */
const synchronous = (name, call) => (...args) => {
  const started = cpuMillis()
  const answer = call(...args)
  count(name, cpuMillis() - started)
  return answer
}
const index = { ...resident, fullText: synchronous('fullText', resident.fullText), nearest: synchronous('nearest', resident.nearest) }
const timedStore = Object.create(store)
timedStore.getEntities = async (ids) => {
  const started = cpuMillis()
  try {
    return await store.getEntities(ids)
  } finally {
    count('getEntities', cpuMillis() - started, ids.length)
  }
}
const search = createSearch(timedStore, { index, embedder, nicknames, relatives })
const WARM_UP = 30
const queries = Number(options.queries)
console.log(`\n| set | a whole search | fullText | nearest | getEntities (ids a read) | the rest |\n|---|---|---|---|---|---|`)
for (const [set, texts] of Object.entries(catalogQuerySets(total, WARM_UP + queries, Number(options.seed)))) {
  for (const text of texts.slice(0, WARM_UP)) await search.search(parseGffs(text, { allowFreeText: true }))
  parts.clear()
  const started = cpuMillis()
  for (const text of texts.slice(WARM_UP)) await search.search(parseGffs(text, { allowFreeText: true }))
  const whole = (cpuMillis() - started) / queries
  const of = (name) => parts.get(name) ?? { milliseconds: 0, calls: 0, ids: 0 }
  const each = (name) => of(name).milliseconds / queries
  const rest = whole - each('fullText') - each('nearest') - each('getEntities')
  const read = of('getEntities')
  console.log(`| ${set} | ${whole.toFixed(2)} ms | ${each('fullText').toFixed(2)} ms | ${each('nearest').toFixed(2)} ms | ${each('getEntities').toFixed(2)} ms (${(read.ids / Math.max(1, read.calls)).toFixed(0)}) | ${rest.toFixed(2)} ms |`)
}
console.log(`\nload average ${loadAverage()}`)
await resident.close()
