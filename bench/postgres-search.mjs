// The search index inside PostgreSQL at scale, beside LanceDB in the same run: indexing throughput,
// index size, and full text's p50/p99 for a rare word, a common word, a name with a typo and a
// prefix of a name, each with and without a prefilter. The PostgreSQL server
// (`PGURL`, default postgres://postgres@127.0.0.1:5432/test) runs with the embedder `none` (no
// pgvector there): full text and names. `--vectors` measures the vector side instead, on PGlite 0.4
// with pgvector (`pglite-vector`, in memory: built every run), beside LanceDB. `--passages N` gives
// every entity N passages of 200 words of text (a fifth of them common words, the rest from a
// vocabulary of 30,000 rarer ones), as the indexer makes them of the renditions' texts.
//
// `node bench/postgres-search.mjs [entities] [--vectors] [--passages N] [--rebuild]` after `npm run
// build`. The server's index is built once into the schema bench_search_<entities>[_p<N>],
// LanceDB's into bench/.data/pg-compare-<entities>[-p<N>]; `--rebuild` drops both first.
import { rmSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { Kysely, PGliteDialect, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { queryWord, tokenize } from '../dist/index.js'
import { createWordVectorEmbedder } from '../dist/embedders/index.js'
import { createLancedbSearchIndex } from '../dist/lancedb/index.js'
import { createPostgresSearchIndex } from '../dist/postgres-search/index.js'
import { DATA_DIR, FIRST_NAMES, idOf, machine, ms, recordOf, surnameOf, WORDS, wordOf } from './lib.mjs'

const TOTAL = Number(process.argv.slice(2).find((argument, at, all) => /^\d+$/.test(argument) && all[at - 1] !== '--passages') ?? 100_000)
const VECTORS = process.argv.includes('--vectors')
const REBUILD = process.argv.includes('--rebuild')
const PASSAGES = process.argv.includes('--passages') ? Number(process.argv[process.argv.indexOf('--passages') + 1]) : 0
const BATCH = 5000
const SAMPLES = 40

// Deterministic data: names and rare words made of syllables, so that typos and prefixes meet
// realistic neighbours (a surname one edit from another), titles of common words plus, in half
// the entities, one rare word.
let seed = 7
const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647
const pick = (items) => items[Math.floor(random() * items.length)]
/** Rare words: one in every other entity, each held by about 5 (at any size). */
const RARE = Math.max(1, Math.floor(TOTAL / 10))
const rareOf = (n) => wordOf(n * 13, 4)

function entityOf(n) {
  const { type, jurisdiction, localType } = recordOf(n)
  const name = type === 'person' ? `${pick(FIRST_NAMES)} ${surnameOf(n)}` : undefined
  const words = Array.from({ length: 5 + Math.floor(random() * 5) }, () => pick(WORDS))
  if (n % 2 === 0) words.push(rareOf(((n / 2) * 7919) % RARE))
  const title = words.join(' ')
  const fields = { type, jurisdiction, localType, title, ...(name === undefined ? {} : { name }) }
  const entity = { id: idOf(n), fields, tokens: tokenize(`${name ?? ''} ${title}`), names: name === undefined ? [] : name.split(' ') }
  return PASSAGES === 0 ? entity : { ...entity, passages: Array.from({ length: PASSAGES }, () => ({ tokens: tokenize(Array.from({ length: 200 }, textWord).join(' ')) })) }
}

/** A word of a passage: a common one, or one of 30,000 others, the first far more often than the last (log-uniform). */
const textWord = () => (random() < 0.2 ? pick(WORDS) : wordOf(Math.floor(30_000 ** random()), 3))

/** Full text's query as search makes it for plain words: each word's token, and its name form. */
const textQueryOf = (text) => ({ words: text.split(' ').map((word) => queryWord(tokenize(word)[0], [word], word)), phrases: [] })
const PREFILTER = [{ kind: 'qualifier', field: 'jurisdiction', negated: false, op: 'eq', values: ['US-WA'] }]

// The queries, the same every run: words and names that the data holds.
seed = 11
const typo = (word) => {
  const at = 1 + Math.floor(random() * (word.length - 2))
  return `${word.slice(0, at)}${word[at] === 'e' ? 'a' : 'e'}${word.slice(at + 1)}`
}
const QUERIES = {
  'rare word': Array.from({ length: SAMPLES }, () => rareOf(Math.floor(random() * RARE))),
  'common word': Array.from({ length: SAMPLES }, () => pick(WORDS)),
  'two common words': Array.from({ length: SAMPLES }, () => `${pick(WORDS)} ${pick(WORDS)}`),
  'name with a typo': Array.from({ length: SAMPLES }, () => typo(surnameOf(10 * Math.floor(random() * (TOTAL / 10))))),
  'prefix of a name': Array.from({ length: SAMPLES }, () => surnameOf(10 * Math.floor(random() * (TOTAL / 10))).slice(0, 5)),
}

function percentiles(samples) {
  samples.sort((a, b) => a - b)
  const at = (q) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]
  return { p50: at(0.5), p99: at(0.99) }
}

/** Builds an index from `TOTAL` entities in batches, `embed` making their vectors (its time counted). */
async function build(name, index, embed) {
  seed = 7
  const started = performance.now()
  for (let start = 0; start < TOTAL; start += BATCH) {
    const entities = Array.from({ length: Math.min(BATCH, TOTAL - start) }, (_, offset) => entityOf(start + offset))
    const vectors = await embed(entities.map((entity) => entity.fields.title))
    await index.apply({ upserts: entities.map((entity, position) => ({ ...entity, vector: vectors[position] })), removals: [], state: { cursor: String(start), embedderId: 'bench' } })
    process.stdout.write(`  ${name}: ${start + entities.length} / ${TOTAL}\r`)
  }
  const added = performance.now() - started
  const optimizeStarted = performance.now()
  await index.optimize()
  const optimized = performance.now() - optimizeStarted
  console.log(`\n${name}: ${TOTAL} entities added in ${(added / 1000).toFixed(1)} s (${Math.round(TOTAL / (added / 1000))}/s), optimize ${(optimized / 1000).toFixed(1)} s; load average ${loadavg().map((value) => value.toFixed(1)).join(' ')}`)
}

/** Times each kind of query with and without the prefilter, the indexes interleaved query by query. */
async function measure(indexes, kinds, search) {
  const rows = []
  for (const kind of kinds) {
    const texts = QUERIES[kind]
    for (const [filter, qualifiers] of [['no prefilter', []], ['jurisdiction:US-WA', PREFILTER]]) {
      const samples = new Map(indexes.map(([name]) => [name, []]))
      const found = new Map(indexes.map(([name]) => [name, 0]))
      for (const [, index] of indexes) await search(index, texts[0], qualifiers) // warm-up
      for (const text of texts) {
        for (const [name, index] of indexes) {
          const started = performance.now()
          const hits = await search(index, text, qualifiers)
          samples.get(name).push(performance.now() - started)
          found.set(name, found.get(name) + hits.length / texts.length)
        }
      }
      const cells = indexes.map(([name]) => {
        const { p50, p99 } = percentiles(samples.get(name))
        return `${ms(p50)} / ${ms(p99)} (${found.get(name).toFixed(0)} hits)`
      })
      rows.push(`| ${kind} | ${filter} | ${cells.join(' | ')} |`)
    }
  }
  console.log(`\n${TOTAL} entities, p50 / p99 (mean hits, limit 100), load average ${loadavg().map((value) => value.toFixed(1)).join(' ')}`)
  console.log(`| query | prefilter | ${indexes.map(([name]) => name).join(' | ')} |`)
  console.log(`|---|---|${indexes.map(() => '---|').join('')}`)
  for (const row of rows) console.log(row)
}

/**
 * What bounding the work costs in relevance: the top 10 as search orders them (every word matched
 * first, then BM25) against scoring every matching row (a limit that asks for all of them).
 */
async function agreement(index) {
  const order = (words) => (a, b) => Number(b.matched === words) - Number(a.matched === words) || b.score - a.score
  const cells = []
  for (const [kind, texts] of Object.entries(QUERIES)) {
    let same = 0
    for (const text of texts.slice(0, 5)) {
      const query = textQueryOf(text)
      const top = (hits) => hits.sort(order(query.words.length)).slice(0, 10).map((hit) => hit.id)
      const [bounded, every] = [top(await index.fullText(query, [], 100)), new Set(top(await index.fullText(query, [], TOTAL)))]
      same += (every.size === 0 ? 1 : bounded.filter((id) => every.has(id)).length / every.size) / 5
    }
    cells.push(`${kind} ${same.toFixed(2)}`)
  }
  console.log(`top 10 shared with scoring every match (5 queries a kind, no prefilter): ${cells.join(', ')}`)
}

console.log(`machine: ${machine()}, load average ${loadavg().map((value) => value.toFixed(1)).join(' ')}`)

if (!VECTORS) {
  // Full text and names: the server, and LanceDB (whose rows need a vector: a constant of one dimension).
  const schema = `bench_search_${TOTAL}${PASSAGES === 0 ? '' : `_p${PASSAGES}`}`
  const admin = new pg.Client({ connectionString: process.env.PGURL ?? 'postgres://postgres@127.0.0.1:5432/test' })
  await admin.connect()
  if (REBUILD) await admin.query(`drop schema if exists ${schema} cascade`)
  const built = (await admin.query('select 1 from pg_namespace where nspname = $1', [schema])).rows.length > 0
  await admin.query(`create schema if not exists ${schema}`)
  await admin.end()
  const pool = new pg.Pool({ connectionString: process.env.PGURL ?? 'postgres://postgres@127.0.0.1:5432/test', options: `-c search_path=${schema},public`, max: 4 })
  const db = new Kysely({ dialect: new PostgresDialect({ pool }) })
  const postgres = await createPostgresSearchIndex({ db, dimensions: 0 })
  const uri = join(DATA_DIR, `pg-compare-${TOTAL}${PASSAGES === 0 ? '' : `-p${PASSAGES}`}`)
  if (REBUILD || !built) rmSync(uri, { recursive: true, force: true })
  const lancedb = await createLancedbSearchIndex({ uri, dimensions: 1, annThreshold: Infinity })
  const one = (texts) => texts.map(() => new Float32Array([1]))
  if (!built || REBUILD) {
    await build('PostgreSQL server', postgres, one)
    await build('LanceDB', lancedb, one)
  }
  const { rows } = await sql`select pg_total_relation_size('search_entities') as entities, pg_total_relation_size('search_terms') as terms,
    pg_relation_size('search_entities') as heap, pg_relation_size('search_entities_document') as document, pg_relation_size('search_entities_names') as names,
    coalesce(pg_relation_size(to_regclass('search_entities_prefiltered_document')), 0) as prefiltered,
    pg_total_relation_size('search_passages') as passages, pg_relation_size('search_passages_document') as passage_document`.execute(db)
  const mb = (bytes) => `${(Number(bytes) / 2 ** 20).toFixed(0)} MB`
  console.log(`PostgreSQL size: entities ${mb(rows[0].entities)} (heap ${mb(rows[0].heap)}, tsvector GIN ${mb(rows[0].document)}, names trigram GIN ${mb(rows[0].names)}, prefilter fields and text GIN ${mb(rows[0].prefiltered)}), passages ${mb(rows[0].passages)} (tsvector GIN ${mb(rows[0].passage_document)}), terms ${mb(rows[0].terms)}`)
  await measure([['PostgreSQL server', postgres], ['LanceDB', lancedb]], Object.keys(QUERIES), (index, text, qualifiers) => index.fullText(textQueryOf(text), qualifiers, 100))
  await agreement(postgres)
  await lancedb.close()
  await db.destroy()
} else {
  // Vectors: PGlite 0.4 with pgvector (HNSW) against LanceDB (IVF_FLAT), the word-vector embedder.
  const { PGlite } = await import('pglite-vector')
  const { vector } = await import('pglite-vector/vector')
  const { pg_trgm } = await import('pglite-vector/contrib/pg_trgm')
  const embedder = createWordVectorEmbedder()
  const db = new Kysely({ dialect: new PGliteDialect({ pglite: new PGlite({ extensions: { vector, pg_trgm } }) }) })
  const postgres = await createPostgresSearchIndex({ db, dimensions: embedder.dimensions })
  const uri = join(DATA_DIR, `pg-compare-vectors-${TOTAL}`)
  rmSync(uri, { recursive: true, force: true })
  const lancedb = await createLancedbSearchIndex({ uri, dimensions: embedder.dimensions })
  const embed = (texts) => embedder.embed(texts)
  await build('PGlite 0.4, pgvector HNSW', postgres, embed)
  await build('LanceDB', lancedb, embed)
  const { rows } = await sql`select pg_total_relation_size('search_entities') as entities, pg_relation_size('search_entities_vector') as vector`.execute(db)
  console.log(`PGlite size: entities ${(Number(rows[0].entities) / 2 ** 20).toFixed(0)} MB (HNSW ${(Number(rows[0].vector) / 2 ** 20).toFixed(0)} MB)`)
  // Only words the embedder knows make a vector: the made-up rare words and names make none.
  const kinds = ['common word', 'two common words']
  const vectors = new Map()
  for (const kind of kinds) for (const text of QUERIES[kind]) vectors.set(text, (await embedder.embed([text]))[0])
  await measure([['PGlite pgvector', postgres], ['LanceDB', lancedb]], kinds, (index, text, qualifiers) => index.nearest(vectors.get(text), qualifiers, 100))
  await lancedb.close()
  await db.destroy()
  rmSync(uri, { recursive: true, force: true })
}
