// Relevance of search over the demo data (test/search/relevance-set.json, graded): entity-registry
// (LanceDB, the default index, and the memory reference; the default embedder; without and with the
// renditions' texts as passages) against what a team
// would drop in instead over the same documents, MiniSearch 7 (prefix and fuzzy on, field boosts) and
// Orama 3 (typo tolerance 1, field boosts): nDCG@10, recall@10 and MRR by kind of query, and the mean
// result count of the queries with no answer. Also the default embedder's load time and throughput.
// The index inside PostgreSQL runs on PGlite: with pg_trgm and no vectors (PGlite 0.5 has no
// pgvector) beside the memory index without vectors, and with vectors when the devDependency
// `pglite-vector` (npm:@electric-sql/pglite@0.4.6, pgvector 0.8.1) is installed; each without and with the texts.
// `node bench/search-relevance.mjs` after `npm run build`; `--by-query` prints every query's figures.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { create, insertMultiple, search as oramaSearch } from '@orama/orama'
import MiniSearch from 'minisearch'
import { createEntityTexts, createIndexer, createSearch, matchesQualifiers, parseGffs } from '../dist/index.js'
import { PGlite } from '@electric-sql/pglite'
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm'
import { Kysely, PGliteDialect } from 'kysely'
import { createNoEmbedder, createWordVectorEmbedder } from '../dist/embedders/index.js'
import { createLancedbSearchIndex } from '../dist/lancedb/index.js'
import { createPostgresSearchIndex } from '../dist/postgres-search/index.js'
import { createMemoryBlobStore, createMemorySearchIndex, createMemoryStore } from '../dist/memory/index.js'
import { importNdjson, loadNicknames } from '../dist/node/index.js'
import { judge, KINDS, measureByKind, RELEVANCE_SET as queries } from '../test/search/relevance.mjs'
import { machine } from './lib.mjs'

const demo = new URL('../demo/', import.meta.url).pathname
const store = createMemoryStore()
const blobs = createMemoryBlobStore()
await importNdjson(readFileSync(`${demo}entities.jsonl`, 'utf8').split('\n'), { warehouse: store.warehouse, blobs, baseDir: demo })
const documents = []
for (let after = null; ; ) {
  const page = await store.listEntities({ qualifiers: [], after, limit: 100 })
  for (const { id } of page.entities) documents.push({ id, snapshot: (await store.getEntity(id)).snapshot })
  if (!page.hasMore) break
  after = page.entities.at(-1).id
}

const embedder = createWordVectorEmbedder()
let started = performance.now()
await embedder.embed(['warm'])
const loadMs = performance.now() - started
const texts = queries.map((query) => query.q)
started = performance.now()
for (let round = 0; round < 200; round++) await embedder.embed(texts)
const perSecond = (200 * texts.length) / ((performance.now() - started) / 1000)

const nicknames = await loadNicknames()
/** `withTexts`: the renditions' texts indexed as passages too. */
async function entityRegistry(index, { withEmbedder = embedder, withTexts = false } = {}) {
  await createIndexer({ store, index, embedder: withEmbedder, ...(withTexts ? { texts: createEntityTexts({ blobs }) } : {}) }).catchUp()
  const search = createSearch(store, { index, embedder: withEmbedder, nicknames })
  return async (q) => (await search.search(parseGffs(q, { allowFreeText: true }))).map((entity) => entity.id)
}

// The peers index what entity-registry's full text indexes (title, name, local identifier). They get
// the same GFFS parse: its words as their query, its qualifiers applied to their results.
const FIELDS = ['title', 'name', 'localIdentifier']
const BOOSTS = { name: 2, localIdentifier: 1.5, title: 1 }
const snapshots = new Map(documents.map(({ id, snapshot }) => [id, snapshot]))
const fieldsOf = ({ id, snapshot }) => ({ id, ...Object.fromEntries(FIELDS.map((field) => [field, snapshot[field] ?? ''])) })
const peer = (rank) => async (q) => {
  const { text, qualifiers } = parseGffs(q, { allowFreeText: true })
  const words = text.filter((term) => !term.negated).map((term) => term.text).join(' ')
  return (await rank(words)).filter((id) => matchesQualifiers(qualifiers, snapshots.get(id))).slice(0, 100)
}

const miniSearch = new MiniSearch({ fields: FIELDS, searchOptions: { prefix: true, fuzzy: 0.2, boost: BOOSTS } })
miniSearch.addAll(documents.map(fieldsOf))
const orama = create({ schema: Object.fromEntries(FIELDS.map((field) => [field, 'string'])) })
await insertMultiple(orama, documents.map(fieldsOf))

const lancedbDirectory = mkdtempSync(join(tmpdir(), 'er-relevance-'))
const lancedbIndex = await createLancedbSearchIndex({ uri: join(lancedbDirectory, 'titles'), dimensions: embedder.dimensions })
const lancedbTextsIndex = await createLancedbSearchIndex({ uri: join(lancedbDirectory, 'texts'), dimensions: embedder.dimensions })
/** The index inside PostgreSQL, on a PGlite of its own. */
async function postgresIndex(Constructor, extensions, dimensions) {
  const db = new Kysely({ dialect: new PGliteDialect({ pglite: new Constructor({ extensions }) }) })
  return createPostgresSearchIndex({ db, dimensions })
}
const pgliteVector = await Promise.all([import('pglite-vector'), import('pglite-vector/vector'), import('pglite-vector/contrib/pg_trgm')]).catch(() => null)
const none = createNoEmbedder()
const engines = {
  'entity-registry (LanceDB)': await entityRegistry(lancedbIndex),
  'entity-registry (memory index)': await entityRegistry(createMemorySearchIndex()),
  'entity-registry (LanceDB, texts)': await entityRegistry(lancedbTextsIndex, { withTexts: true }),
  'entity-registry (memory index, texts)': await entityRegistry(createMemorySearchIndex(), { withTexts: true }),
  ...(pgliteVector === null
    ? {}
    : {
        'entity-registry (PostgreSQL: PGlite 0.4, pgvector)': await entityRegistry(await postgresIndex(pgliteVector[0].PGlite, { vector: pgliteVector[1].vector, pg_trgm: pgliteVector[2].pg_trgm }, embedder.dimensions)),
        'entity-registry (PostgreSQL: PGlite 0.4, pgvector, texts)': await entityRegistry(await postgresIndex(pgliteVector[0].PGlite, { vector: pgliteVector[1].vector, pg_trgm: pgliteVector[2].pg_trgm }, embedder.dimensions), { withTexts: true }),
      }),
  'entity-registry (memory index, no vectors)': await entityRegistry(createMemorySearchIndex(), { withEmbedder: none }),
  'entity-registry (PostgreSQL: PGlite, pg_trgm, no vectors)': await entityRegistry(await postgresIndex(PGlite, { pg_trgm }, 0), { withEmbedder: none }),
  'entity-registry (memory index, no vectors, texts)': await entityRegistry(createMemorySearchIndex(), { withEmbedder: none, withTexts: true }),
  'entity-registry (PostgreSQL: PGlite, pg_trgm, no vectors, texts)': await entityRegistry(await postgresIndex(PGlite, { pg_trgm }, 0), { withEmbedder: none, withTexts: true }),
  'MiniSearch 7 (prefix, fuzzy 0.2, boosts)': peer(async (words) => miniSearch.search(words).map((hit) => hit.id)),
  'Orama 3 (tolerance 1, boosts)': peer(async (words) => (await oramaSearch(orama, { term: words, properties: FIELDS, boost: BOOSTS, tolerance: 1, limit: 1000 })).hits.map((hit) => hit.id)),
}

const fixed = (value) => (value === null ? '-' : value.toFixed(3))
console.log(`machine: ${machine()}`)
console.log(`default embedder: cache loaded in ${loadMs.toFixed(0)} ms, ${Math.round(perSecond)} texts/s`)
if (pgliteVector === null) console.log('PostgreSQL with pgvector left out: install the devDependency "pglite-vector": "npm:@electric-sql/pglite@0.4.6"')
const counts = Object.fromEntries(KINDS.map((kind) => [kind, queries.filter((query) => query.kind === kind).length]))
console.log(`${queries.length} queries: ${KINDS.map((kind) => `${kind} ${counts[kind]}`).join(', ')}\n`)
const results = {}
for (const [name, rank] of Object.entries(engines)) results[name] = await measureByKind(queries, rank)

for (const [title, key] of [['nDCG@10', 'ndcg10'], ['recall@10', 'recall10'], ['MRR', 'mrr']]) {
  console.log(`${title}\n\n| engine | all | ${KINDS.filter((kind) => kind !== 'none').join(' | ')} |`)
  console.log(`|---|---|${KINDS.filter((kind) => kind !== 'none').map(() => '---|').join('')}`)
  for (const [name, byKind] of Object.entries(results)) {
    console.log(`| ${name} | ${fixed(byKind.all[key])} | ${KINDS.filter((kind) => kind !== 'none').map((kind) => fixed(byKind[kind][key])).join(' | ')} |`)
  }
  console.log('')
}
console.log('No answer: mean results a query (fewer is better)\n\n| engine | results |\n|---|---|')
for (const [name, byKind] of Object.entries(results)) console.log(`| ${name} | ${byKind.none.results.toFixed(1)} |`)

if (process.argv.includes('--by-query')) {
  console.log(`\n| query | kind | ${Object.keys(engines).join(' | ')} |`)
  for (const query of queries) {
    const cells = []
    for (const rank of Object.values(engines)) {
      const figures = judge(query, await rank(query.q))
      cells.push(figures.ndcg10 === undefined ? `${figures.results} results` : figures.ndcg10.toFixed(2))
    }
    console.log(`| ${query.q} | ${query.kind} | ${cells.join(' | ')} |`)
  }
}
await lancedbIndex.close()
await lancedbTextsIndex.close()
rmSync(lancedbDirectory, { recursive: true, force: true })
