// Search at scale: 1,000,000 entities in a LanceDB index on local disk. Measures the index build
// rate (embedding included), hybrid queries with a prefilter (both rankings and the fusion: what
// the search endpoint asks of the index), the vector side's recall@100 against exact search, and
// the time from a write to its being searchable. `node bench/search-scale.mjs [entities]` after
// `npm run build`; the index is built once into bench/.data/search-1m.
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fuse, tokenize } from '../dist/index.js'
import { createWordVectorEmbedder } from '../dist/embedders/index.js'
import { createLancedbSearchIndex } from '../dist/lancedb/index.js'
import { DATA_DIR, machine, ms, WORDS } from './lib.mjs'

const TOTAL = Number(process.argv[2] ?? 1_000_000)
const STATES = ['AL', 'CA', 'NY', 'TX', 'WA', 'OR', 'FL', 'IL', 'PA', 'OH']
const TYPES = ['person', 'legislation', 'committee']

let seed = 7
const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647)
const pick = (items) => items[Math.floor(random() * items.length)]
/** Full text's query for plain words (the titles hold no names). */
const textQueryOf = (text) => ({ words: tokenize(text).map((token) => ({ token, names: [token] })), phrases: [] })
const titleOf = () => Array.from({ length: 5 + Math.floor(random() * 5) }, () => pick(WORDS)).join(' ')
const fieldsOf = (n) => ({ type: TYPES[n % 3], jurisdiction: `US-${STATES[(n * 7) % STATES.length]}`, title: titleOf(), localType: n % 3 === 1 ? 'bill' : 'record' })

const embedder = createWordVectorEmbedder()
mkdirSync(DATA_DIR, { recursive: true })
const uri = join(DATA_DIR, TOTAL === 1_000_000 ? 'search-1m' : `search-${TOTAL}`)
const index = await createLancedbSearchIndex({ uri, dimensions: embedder.dimensions })
// New, or emptied by an index version with other columns.
const fresh = (await index.nearest(new Float32Array(embedder.dimensions).fill(0.1), [], 1)).length === 0

console.log(`machine: ${machine()}`)
if (fresh) {
  const started = performance.now()
  for (let start = 0; start < TOTAL; start += 20_000) {
    const batch = Array.from({ length: Math.min(20_000, TOTAL - start) }, (_, offset) => ({ id: `e${(start + offset).toString(36).padStart(5, '0')}`, fields: fieldsOf(start + offset) }))
    const vectors = await embedder.embed(batch.map(({ fields }) => `${fields.title}. ${fields.localType}`))
    const upserts = batch.map(({ id, fields }, position) => ({ id, fields, tokens: tokenize(fields.title), names: [], vector: vectors[position] }))
    // Rows are new: `apply` deletes before it adds, which costs nothing on ids that are not there.
    await index.apply({ upserts, removals: [], state: { cursor: null, embedderId: embedder.id } })
    process.stdout.write(`  ${start + batch.length} / ${TOTAL}\r`)
  }
  const added = performance.now() - started
  const indexStarted = performance.now()
  await index.optimize()
  const indexed = performance.now() - indexStarted
  console.log(`\nbuilt: ${TOTAL} entities embedded and added in ${(added / 1000).toFixed(1)} s (${Math.round(TOTAL / (added / 1000))}/s); indexes (FTS, IVF_FLAT) built in ${(indexed / 1000).toFixed(1)} s`)
}

if (!fresh) await index.optimize() // an index built by an older version gains the indexes it lacks

const qualifiers = [
  { kind: 'qualifier', field: 'type', negated: false, op: 'eq', values: ['legislation'] },
  { kind: 'qualifier', field: 'jurisdiction', negated: false, op: 'eq', values: ['US-WA'] },
]
seed = 11 // the same queries whether or not this run built the data
const queries = Array.from({ length: 60 }, () => `${pick(WORDS)} ${pick(WORDS)}`)

async function hybrid(text, filter) {
  const [vector] = await embedder.embed([text])
  const query = textQueryOf(text)
  const [byText, byMeaning] = await Promise.all([index.fullText(query, filter, 100), index.nearest(vector, filter, 100)])
  return fuse(byText, byMeaning, query.words.length).slice(0, 100)
}

function percentiles(samples) {
  samples.sort((a, b) => a - b)
  const at = (q) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]
  return { p50: at(0.5), p95: at(0.95), max: samples.at(-1) }
}

for (const query of queries.slice(0, 10)) await hybrid(query, qualifiers) // warm-up
const withFilter = []
const without = []
for (const query of queries) {
  let started = performance.now()
  await hybrid(query, qualifiers)
  withFilter.push(performance.now() - started)
  started = performance.now()
  await hybrid(query, [])
  without.push(performance.now() - started)
}
const a = percentiles(withFilter)
const b = percentiles(without)
console.log(`hybrid, prefilter type:legislation jurisdiction:US-WA (3% of rows): p50 ${ms(a.p50)}, p95 ${ms(a.p95)}, max ${ms(a.max)}`)
console.log(`hybrid, no prefilter: p50 ${ms(b.p50)}, p95 ${ms(b.p95)}, max ${ms(b.max)}`)

// Each side alone under the prefilter: which one the hybrid waits for.
const textAlone = []
const vectorAlone = []
for (const query of queries) {
  const [vector] = await embedder.embed([query])
  let started = performance.now()
  await index.fullText(textQueryOf(query), qualifiers, 100)
  textAlone.push(performance.now() - started)
  started = performance.now()
  await index.nearest(vector, qualifiers, 100)
  vectorAlone.push(performance.now() - started)
}
const t = percentiles(textAlone)
const v = percentiles(vectorAlone)
console.log(`alone, under the prefilter: full text p50 ${ms(t.p50)}, p95 ${ms(t.p95)}; vectors p50 ${ms(v.p50)}, p95 ${ms(v.p95)}`)
await index.close()

// Recall@100 of the vector side (its ANN index) against exact search over the same rows, with and
// without the prefilter, probing as the index does (50 partitions; 70 under a prefilter, whose
// nearest rows lie in more partitions).
const lancedb = await import('@lancedb/lancedb')
const table = await (await lancedb.connect(uri)).openTable('entities')
const where = "type = 'legislation' AND jurisdiction = 'US-WA'"
const recall = { all: 0, prefiltered: 0 }
for (const query of queries) {
  const [vector] = await embedder.embed([query])
  for (const [name, filter, probes] of [['all', null, 50], ['prefiltered', where, 70]]) {
    const nearest = () => {
      const search = table.query().nearestTo(Array.from(vector)).distanceType('cosine').select(['id', '_distance']).limit(100)
      return filter === null ? search : search.where(filter)
    }
    const approximate = await nearest().nprobes(probes).toArray()
    const exact = await nearest().bypassVectorIndex().toArray()
    const truth = new Set(exact.map((row) => row.id))
    recall[name] += approximate.filter((row) => truth.has(row.id)).length / truth.size / queries.length
  }
}
console.log(`vector side recall@100 against exact search (IVF_FLAT): ${recall.all.toFixed(3)} (50 probes); under the prefilter ${recall.prefiltered.toFixed(3)} (70 probes)`)
table.close()

// From a write to its being searchable: new rows are found at once, before the indexes fold them in.
const writable = await createLancedbSearchIndex({ uri, dimensions: embedder.dimensions })
const delays = []
for (let write = 0; write < 20; write++) {
  const word = `zqx${write}marker`
  const started = performance.now()
  const [vector] = await embedder.embed([word])
  await writable.apply({ upserts: [{ id: `new${write}`, fields: { type: 'legislation', title: word }, tokens: [word], names: [], vector }], removals: [], state: { cursor: null, embedderId: embedder.id } })
  while ((await writable.fullText(textQueryOf(word), [], 10))[0]?.id !== `new${write}`) await new Promise((resolve) => setTimeout(resolve, 10))
  delays.push(performance.now() - started)
}
const d = percentiles(delays)
console.log(`write to searchable: p50 ${ms(d.p50)}, p95 ${ms(d.p95)} (20 writes, one at a time, embedding included)`)
await writable.apply({ upserts: [], removals: Array.from({ length: 20 }, (_, write) => `new${write}`), state: { cursor: null, embedderId: embedder.id } })
await writable.close()
if (process.argv.includes('--clean')) rmSync(uri, { recursive: true, force: true })
