// Where LanceDB's time goes under a prefilter, at the index search-scale.mjs builds (1,000,000
// entities; bench/.data/search-1m-texts, or search-1m with --index). Single queries at the entities'
// table, p50 of 8 after 2 of warm-up: a title word (in 82,000 titles) ranked by full text under
// prefilters that keep more or fewer rows than it has postings, at several limits; the same with its
// row ids read instead of its ids; and the vector side's probes with and without the prefilter.
//   node bench/lancedb-prefilter.mjs [--index search-1m-texts] [--plan]
// --plan prints LanceDB's plans (analyzePlan) of the full-text query under the two first prefilters.
import { parseArgs } from 'node:util'
import { performance } from 'node:perf_hooks'
import * as lancedb from '@lancedb/lancedb'
import { createWordVectorEmbedder } from '../dist/embedders/index.js'
import { DATA_DIR, machine } from './lib.mjs'

const { values: options } = parseArgs({ options: { index: { type: 'string', default: 'search-1m-texts' }, plan: { type: 'boolean', default: false } } })
const db = await lancedb.connect(DATA_DIR + options.index)
const entities = await db.openTable('entities')

async function p50(make) {
  for (let warm = 0; warm < 2; warm++) await make().toArray()
  const times = []
  let rows = 0
  for (let run = 0; run < 8; run++) {
    const started = performance.now()
    rows = (await make().toArray()).length
    times.push(performance.now() - started)
  }
  times.sort((a, b) => a - b)
  return `${times[4].toFixed(1)} ms (${rows} rows)`
}

const word = 'health'
const match = () => new lancedb.MatchQuery(word, 'tokens')
const fullText = (where, limit = 100, columns = ['id', '_score']) => {
  const query = entities.query().fullTextSearch(match()).select(columns).limit(limit)
  return where === null ? query : query.where(where)
}
const postings = (await entities.query().fullTextSearch(match()).select(['_rowid']).limit(2_000_000).toArray()).length
const prefilters = [
  "type = 'legislation' AND jurisdiction = 'US-WA'",
  "jurisdiction = 'US-WA'",
  "type = 'legislation' AND jurisdiction IN ('US-WA', 'US-AL')",
  "type = 'legislation' AND jurisdiction IN ('US-WA', 'US-AL', 'US-CA')",
  "type = 'legislation'",
  "NOT (type != 'legislation' OR jurisdiction != 'US-WA')",
]
console.log(`${machine()}; ${options.index}: ${await entities.countRows()} entities; '${word}' in ${postings} titles`)
console.log(`full text '${word}', no prefilter: ${await p50(() => fullText(null))}`)
for (const where of prefilters) {
  const kept = await entities.countRows(where)
  console.log(`full text '${word}', ${where} (${kept} rows, ${kept < postings ? 'fewer' : 'more'} than its postings): ${await p50(() => fullText(where))}`)
}
for (const limit of [10, 300]) console.log(`full text '${word}', ${prefilters[0]}, limit ${limit}: ${await p50(() => fullText(prefilters[0], limit))}`)
console.log(`row ids instead of ids (no read of the rows): no prefilter ${await p50(() => fullText(null, 100, ['_rowid', '_score']))}; ${prefilters[0]} ${await p50(() => fullText(prefilters[0], 100, ['_rowid', '_score']))}`)

const [vector] = await createWordVectorEmbedder().embed([`${word} kalolo`])
const nearest = (probes, where) => {
  const query = entities.query().nearestTo(Array.from(vector)).distanceType('cosine').nprobes(probes).select(['id', '_distance']).limit(100)
  return where === null ? query : query.where(where)
}
console.log(`vectors, no prefilter, 50 probes: ${await p50(() => nearest(50, null))}`)
for (const probes of [50, 70]) console.log(`vectors, ${prefilters[0]}, ${probes} probes: ${await p50(() => nearest(probes, prefilters[0]))}`)
if (options.plan) for (const where of prefilters.slice(0, 2)) console.log(`\n${where}\n${await fullText(where).analyzePlan()}`)
