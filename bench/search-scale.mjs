// Search at scale: 1,000,000 entities in a LanceDB index on local disk. Measures the index build
// rate (embedding included), hybrid queries with a prefilter (both rankings and the fusion: what
// the search endpoint asks of the index), the vector side's recall@100 against exact search, and
// the time from a write to its being searchable. `node bench/search-scale.mjs [entities]` after
// `npm run build`; the index is built once into bench/.data/search-1m. With `--texts N`, N of the
// entities (spread evenly) have a synthetic ~20 KB text, cut into passages as the indexer cuts
// them, in an index of its own (bench/.data/search-1m-texts).
import { execFileSync } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import * as lancedb from '@lancedb/lancedb'
import { transformSync } from 'esbuild'
import { fuse, tokenize } from '../dist/index.js'
import { createWordVectorEmbedder } from '../dist/embedders/index.js'
import { createLancedbSearchIndex } from '../dist/lancedb/index.js'
import { DATA_DIR, machine, ms, plainWordsQuery, SEARCH_PREFILTER, searchEntities, syntheticTexts, textBearers, WORDS } from './lib.mjs'

const TOTAL = Number(process.argv.slice(2).find((argument, at, all) => /^\d+$/.test(argument) && all[at - 1] !== '--texts') ?? 1_000_000)
const TEXTS = process.argv.includes('--texts') ? Number(process.argv[process.argv.indexOf('--texts') + 1]) : 0
// The indexer's own cutting, from its source: `passagesOf` is not part of the package's API.
const { passagesOf } = await import(`data:text/javascript,${encodeURIComponent(transformSync(readFileSync(new URL('../src/texts/passages.ts', import.meta.url), 'utf8'), { loader: 'ts', format: 'esm' }).code)}`)
const { fieldsOf, pick, reseed } = searchEntities()

// Texts: their own generator (`syntheticTexts`), so that titles stay as without texts.
const texts = syntheticTexts(WORDS)
const hasText = textBearers(TOTAL, TEXTS)

const embedder = createWordVectorEmbedder()
mkdirSync(DATA_DIR, { recursive: true })
const uri = join(DATA_DIR, `${TOTAL === 1_000_000 ? 'search-1m' : `search-${TOTAL}`}${TEXTS > 0 ? `-texts${TEXTS === TOTAL / 10 ? '' : `-${TEXTS}`}` : ''}`)
const index = await createLancedbSearchIndex({ uri, dimensions: embedder.dimensions })
// New, or emptied by an index version with other columns.
const fresh = (await index.nearest(new Float32Array(embedder.dimensions).fill(0.1), [], 1)).length === 0

const sizeOf = (path) => execFileSync('du', ['-sh', path], { encoding: 'utf8' }).split('\t')[0]
console.log(`machine: ${machine()}; load average ${execFileSync('uptime', { encoding: 'utf8' }).split('load average: ')[1].trim()}`)
if (fresh) {
  const started = performance.now()
  const text = { generating: 0, cutting: 0, bytes: 0, passages: 0 }
  for (let start = 0; start < TOTAL; start += 20_000) {
    const batch = Array.from({ length: Math.min(20_000, TOTAL - start) }, (_, offset) => ({ id: `e${(start + offset).toString(36).padStart(5, '0')}`, fields: fieldsOf(start + offset) }))
    const vectors = await embedder.embed(batch.map(({ fields }) => `${fields.title}. ${fields.localType}`))
    const upserts = batch.map(({ id, fields }, position) => ({ id, fields, tokens: tokenize(fields.title), names: [], vector: vectors[position], created: true }))
    for (const [position, upsert] of upserts.entries()) {
      if (!hasText(start + position)) continue
      let at = performance.now()
      const body = texts.textOf()
      text.generating += performance.now() - at
      at = performance.now()
      // As the indexer makes them: cut, then each passage tokenized.
      upsert.passages = passagesOf([body]).map((passage) => ({ tokens: tokenize(passage) }))
      text.cutting += performance.now() - at
      text.bytes += Buffer.byteLength(body)
      text.passages += upsert.passages.length
    }
    // Marked new, as the indexer marks an entity's creation: `apply` adds them without the delete by id,
    // which reads every row the id index does not hold yet (the build slowed to 1,300 entities a second).
    await index.apply({ upserts, removals: [], state: { cursor: null, embedderId: embedder.id } })
    process.stdout.write(`  ${start + batch.length} / ${TOTAL}\r`)
  }
  // The synthetic texts' making is not the registry's work.
  const added = performance.now() - started - text.generating
  const indexStarted = performance.now()
  await index.optimize()
  const indexed = performance.now() - indexStarted
  console.log(`\nbuilt: ${TOTAL} entities embedded and added in ${(added / 1000).toFixed(1)} s (${Math.round(TOTAL / (added / 1000))}/s); indexes (FTS, IVF_FLAT) built in ${(indexed / 1000).toFixed(1)} s`)
  if (TEXTS > 0) {
    const megabytes = text.bytes / 1e6
    console.log(`texts: ${TEXTS} of ${(megabytes / TEXTS * 1000).toFixed(1)} KB, ${megabytes.toFixed(0)} MB, ${text.passages} passages; cut and tokenized at ${(megabytes / (text.cutting / 1000)).toFixed(1)} MB/s; ` +
      `added with the entities at ${(megabytes / (added / 1000)).toFixed(1)} MB/s, with the index build ${(megabytes / ((added + indexed) / 1000)).toFixed(1)} MB/s`)
  }
}
const sizes = () => `${sizeOf(uri)} (entities ${sizeOf(join(uri, 'entities.lance'))}, passages ${sizeOf(join(uri, 'passages.lance'))})`
console.log(`on disk: ${sizes()}`)

if (!fresh) await index.optimize() // an index built by an older version gains the indexes it lacks

const qualifiers = SEARCH_PREFILTER
reseed(11) // the same queries whether or not this run built the data
const queries = Array.from({ length: 60 }, () => `${pick(WORDS)} ${pick(WORDS)}`)
// With texts, also words found only in them: one beside a title word, and two alone.
texts.reseed(17)
const { textOnlyWord } = texts
const querySets = TEXTS === 0 ? { 'title words': queries } : {
  'title words': queries,
  'a title word and a text word': Array.from({ length: 40 }, () => `${pick(WORDS)} ${textOnlyWord()}`),
  'two text words': Array.from({ length: 40 }, () => `${textOnlyWord()} ${textOnlyWord()}`),
}

async function hybrid(text, filter) {
  const [vector] = await embedder.embed([text])
  const query = plainWordsQuery(text)
  const [byText, byMeaning] = await Promise.all([index.fullText(query, filter, 100), index.nearest(vector, filter, 100)])
  return fuse(byText, byMeaning, query.words.length).slice(0, 100)
}

function percentiles(samples) {
  samples.sort((a, b) => a - b)
  const at = (q) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]
  return { p50: at(0.5), p95: at(0.95), max: samples.at(-1) }
}

for (const query of queries.slice(0, 10)) await hybrid(query, qualifiers) // warm-up
for (const [name, set] of Object.entries(querySets)) {
  const withFilter = []
  const without = []
  for (const query of set) {
    let started = performance.now()
    await hybrid(query, qualifiers)
    withFilter.push(performance.now() - started)
    started = performance.now()
    await hybrid(query, [])
    without.push(performance.now() - started)
  }
  const a = percentiles(withFilter)
  const b = percentiles(without)
  const of = TEXTS > 0 ? ` (${set.length} queries of ${name})` : ''
  console.log(`hybrid, prefilter type:legislation jurisdiction:US-WA (3% of rows)${of}: p50 ${ms(a.p50)}, p95 ${ms(a.p95)}, max ${ms(a.max)}`)
  console.log(`hybrid, no prefilter${of}: p50 ${ms(b.p50)}, p95 ${ms(b.p95)}, max ${ms(b.max)}`)
}

// Each side alone under the prefilter: which one the hybrid waits for.
for (const [name, set] of Object.entries(querySets)) {
  const textAlone = []
  const vectorAlone = []
  for (const query of set) {
    const [vector] = await embedder.embed([query])
    let started = performance.now()
    await index.fullText(plainWordsQuery(query), qualifiers, 100)
    textAlone.push(performance.now() - started)
    started = performance.now()
    await index.nearest(vector, qualifiers, 100)
    vectorAlone.push(performance.now() - started)
  }
  const t = percentiles(textAlone)
  const v = percentiles(vectorAlone)
  const of = TEXTS > 0 ? ` (${name})` : ''
  console.log(`alone, under the prefilter${of}: full text p50 ${ms(t.p50)}, p95 ${ms(t.p95)}; vectors p50 ${ms(v.p50)}, p95 ${ms(v.p95)}`)
}
await index.close()

// Recall@100 of the vector side (its ANN index) against exact search over the same rows, with and
// without the prefilter, probing as the index does (50 partitions; 70 under a prefilter, whose
// nearest rows lie in more partitions).
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
  while ((await writable.fullText(plainWordsQuery(word), [], 10))[0]?.id !== `new${write}`) await new Promise((resolve) => setTimeout(resolve, 10))
  delays.push(performance.now() - started)
}
const d = percentiles(delays)
console.log(`write to searchable: p50 ${ms(d.p50)}, p95 ${ms(d.p95)} (20 writes, one at a time, embedding included)`)
await writable.apply({ upserts: [], removals: Array.from({ length: 20 }, (_, write) => `new${write}`), state: { cursor: null, embedderId: embedder.id } })
await writable.close()
if (fresh) {
  // The index keeps replaced versions an hour for readers: what the data itself takes is without them
  // (removed last: the index open above reads an older version's files).
  const db = await lancedb.connect(uri)
  for (const name of ['entities', 'passages']) {
    const table = await db.openTable(name)
    // Twice: the first removes the old versions, then may fold the indexes anew, whose old files the second removes.
    await table.optimize({ cleanupOlderThan: new Date(), deleteUnverified: true })
    await table.optimize({ cleanupOlderThan: new Date(), deleteUnverified: true })
    table.close()
  }
  console.log(`on disk without the versions kept for readers: ${sizes()}`)
}
if (process.argv.includes('--clean')) rmSync(uri, { recursive: true, force: true })
