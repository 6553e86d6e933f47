// Where a search's CPU goes at 1,000,000 entities, part by part, in this process (the CPU of every
// thread, LanceDB's included, while one query runs at a time), over search-cost.mjs's catalogue and
// query sets:
//   - search: `createSearch` as `serve` makes it (the bundled nicknames), the whole query;
//   - embed: the query's vector; index.fullText and index.nearest: each side of the index alone, as
//     the search endpoint asks it (plain words, limit 100);
//   - LanceDB's primitives alone: one MatchQuery of the words (any of them), IVF_FLAT at 50 and at 10
//     probes, an exact (flat) search under the prefilter, and a get by id (LanceDB's fixed cost a query).
// Each part over the same queries, one after the other, after ten others untimed; the median CPU and
// wall time of each.
//   node bench/search-parts.mjs [--entities 1000000] [--queries 20] [--sets title,prefilter,name,common]
// after `npm run build` and a first run of search-cost.mjs (which builds the data it reads).
import { existsSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import * as lancedb from '@lancedb/lancedb'
import { createSearch, parseGffs } from '../dist/index.js'
import { createWordVectorEmbedder } from '../dist/embedders/index.js'
import { createSqliteStore } from '../dist/kysely/index.js'
import { createLancedbSearchIndex } from '../dist/lancedb/index.js'
import { loadNicknames } from '../dist/node/index.js'
import { catalogQuerySets, DATA_DIR, machine, plainWordsQuery, quantile } from './lib.mjs'

const { values: options } = parseArgs({
  options: {
    entities: { type: 'string', default: '1000000' },
    queries: { type: 'string', default: '20' },
    sets: { type: 'string', default: 'title,prefilter,name,common' },
  },
})
const total = Number(options.entities)
const SET_NAMES = { title: 'title words', prefilter: 'title words, 2% prefilter', name: 'name with a typo', common: 'common word' }
const data = join(DATA_DIR, `search-catalog-${total}`)
if (!existsSync(data)) throw new Error(`no ${data}: run bench/search-cost.mjs --entities ${total} first`)

const embedder = createWordVectorEmbedder()
const store = await createSqliteStore({ file: join(data, 'registry.sqlite') })
const index = await createLancedbSearchIndex({ uri: join(data, 'search'), dimensions: embedder.dimensions })
const search = createSearch(store, { index, embedder, nicknames: await loadNicknames() })
const table = await (await lancedb.connect(join(data, 'search'))).openTable('entities')
// A seed of its own: other queries than search-cost.mjs's; the first ten of each set warm up each part.
const WARM_UP = 10
const allSets = catalogQuerySets(total, WARM_UP + Number(options.queries), 3)

const cpuMillis = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}
/**
 * `run` over every query, one at a time, after the warm-up's queries untimed (this script's own handle
 * on the table loads each index, and the IVF partitions, at their first use): the median CPU and wall milliseconds.
 */
async function timed(warmUp, queries, run) {
  for (const query of warmUp) await run(query)
  const cpu = []
  const wall = []
  for (const query of queries) {
    const [cpuBefore, started] = [cpuMillis(), performance.now()]
    await run(query)
    wall.push(performance.now() - started)
    cpu.push(cpuMillis() - cpuBefore)
  }
  const median = (samples) => quantile(samples.sort((a, b) => a - b), 0.5)
  return { cpu: median(cpu), wall: median(wall) }
}

/** The query's words, and its type and jurisdiction as LanceDB's prefilter (null when it has none). */
function partsOf(text) {
  const query = parseGffs(text, { allowFreeText: true })
  const words = query.text.map((term) => term.text).join(' ')
  const where = query.qualifiers.map((qualifier) => `${qualifier.field} = '${qualifier.values[0]}'`).join(' AND ') || null
  return { query, words, where }
}
const filtered = (builder, where) => (where === null ? builder : builder.where(where))
const ANY_ID = (await table.query().select(['id']).limit(1).toArray())[0].id

const PARTS = {
  'search (the whole query)': ({ query }) => search.search(query),
  embed: ({ words }) => embedder.embed([words]),
  'index.fullText': ({ query, words }) => index.fullText(plainWordsQuery(words), query.qualifiers, 100),
  'index.nearest': ({ query, vector }) => index.nearest(vector, query.qualifiers, 100),
  'LanceDB: one MatchQuery (any word)': ({ words, where }) => filtered(table.query().fullTextSearch(new lancedb.MatchQuery(words.toLowerCase(), 'tokens')).select(['id', '_score']).limit(100), where).toArray(),
  ...Object.fromEntries(
    [50, 10].map((probes) => [
      `LanceDB: IVF_FLAT, ${probes} probes`,
      ({ vector, where }) => filtered(table.query().nearestTo(Array.from(vector)).distanceType('cosine').nprobes(probes).select(['id', '_distance']).limit(100), where).toArray(),
    ]),
  ),
  'LanceDB: flat under the prefilter': ({ vector, where }) => table.query().nearestTo(Array.from(vector)).distanceType('cosine').bypassVectorIndex().where(where).select(['id', '_distance']).limit(100).toArray(),
  'LanceDB: get by id': () => table.query().where(`id = '${ANY_ID}'`).select(['id']).limit(1).toArray(),
}

const results = {}
for (const short of options.sets.split(',')) {
  const name = SET_NAMES[short]
  const queries = await Promise.all(
    allSets[name].map(async (text) => {
      const parts = partsOf(text)
      return { ...parts, vector: (await embedder.embed([parts.words]))[0] }
    }),
  )
  const warmUp = queries.slice(0, WARM_UP)
  const measured = queries.slice(WARM_UP)
  for (const [part, run] of Object.entries(PARTS)) {
    // The exact search is measured where every query has a prefilter (with none it reads every row).
    if (part.includes('flat under') && queries.some(({ where }) => where === null)) continue
    ;(results[part] ??= {})[name] = await timed(warmUp, measured, run)
  }
  process.stdout.write('.')
}
const millis = (value) => value.toFixed(value < 1 ? 2 : 1)
const names = options.sets.split(',').map((short) => SET_NAMES[short])
console.log(`\n${machine()}; load average ${loadavg().map((load) => load.toFixed(2)).join(', ')}; ${total.toLocaleString('en')} entities, ${options.queries} queries a set; CPU / wall, medians\n`)
console.log(`| part | ${names.join(' | ')} |\n|---|${names.map(() => '---|').join('')}`)
for (const [part, bySet] of Object.entries(results)) {
  console.log(`| ${part} | ${names.map((name) => (bySet[name] ? `${millis(bySet[name].cpu)} / ${millis(bySet[name].wall)} ms` : '')).join(' | ')} |`)
}
await index.close()
await store.close()
