// Relevance of search over the demo data, by the protocol of bench/README.md ("The protocol"): a
// graded set (test/search/relevance-set.json, or `--set FILE` of the same shape) in its development
// and held-out parts, nDCG@10 with a bootstrap 95% interval beside each figure, by kind of query, for
// the three indexes (LanceDB, search inside PostgreSQL, the memory reference), the renditions' texts
// searched (`serve`'s default), with the default embedder and with `--embedder none`; and what a
// team would drop in instead over the same documents, MiniSearch 7 (prefix and fuzzy on, field
// boosts) and Orama 3 (typo tolerance 1, field boosts).
// The index inside PostgreSQL runs on PGlite: with pgvector when the devDependency `pglite-vector`
// (npm:@electric-sql/pglite@0.4.6, pgvector 0.8.1) is installed, and with pg_trgm alone without vectors.
// `node bench/search-relevance.mjs` after `npm run build`. Options:
//   --set FILE        another set (its queries without a `part` are held out); `--set 2` is
//                     test/search/relevance-set-2.json (held out whole), `--set 3`
//                     test/search/relevance-set-3.json (paraphrases only, a development set: every
//                     query `part: "dev"`), `--set 4` test/search/relevance-set-4.json (399 surnames
//                     with one typo each, made by scripts/make-typo-set.mjs: held out whole)
//   --by FIELD        the figures by another field of the queries than `kind` (`--set 3 --by target`:
//                     person, committee, bill)
//   --embedder NAME   `default` or `none` alone (both by default); or a candidate measured in the
//                     default's place (its figures named `vectors`, so that `--against` compares it
//                     with a saved run of the default): `transformers:DIR` (a transformers.js model
//                     in DIR) or `module:FILE` (an ES module whose `createEmbedder()` returns one)
//   --index NAME      `lancedb`, `postgres` or `memory` alone (all three by default; parity needs them)
//   --part NAME       `dev` alone: what tuning looks at (the held-out part is looked at to decide, once)
//   --save FILE       write every query's figures (JSON), to compare a change against
//   --against FILE    a paired comparison with a saved run: the change's difference on each part,
//                     its interval, up / down / noise, and whether the change is kept
//   --by-query        every query's nDCG@10
//   --no-peers        leave MiniSearch and Orama out
//   --no-word-relatives  search without WordNet's relatives of the typed words (`serve --no-word-relatives`)
//   --word-relatives FILE  another list of relatives in the place of assets/wordnet/relatives.txt.gz (its
//                     format, gzipped): a variant of scripts/build-word-relatives.mjs, measured
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { create, insertMultiple, search as oramaSearch } from '@orama/orama'
import MiniSearch from 'minisearch'
import { gunzipSync } from 'node:zlib'
import { createEntityTexts, createIndexer, createSearch, matchesQualifiers, parseGffs, parseWordRelatives } from '../dist/index.js'
import { PGlite } from '@electric-sql/pglite'
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm'
import { Kysely, PGliteDialect } from 'kysely'
import { createNoEmbedder, createTransformersEmbedder, createWordVectorEmbedder } from '../dist/embedders/index.js'
import { createLancedbSearchIndex } from '../dist/lancedb/index.js'
import { createPostgresSearchIndex } from '../dist/postgres-search/index.js'
import { createMemoryBlobStore, createMemorySearchIndex, createMemoryStore } from '../dist/memory/index.js'
import { importNdjson, loadNicknames, loadWordRelatives } from '../dist/node/index.js'
import { bootstrapInterval, judge, KINDS, pairedDifference, PARTS, readRelevanceSet } from '../test/search/relevance.mjs'
import { machine } from './lib.mjs'

const { values: options } = parseArgs({
  options: {
    set: { type: 'string', default: new URL('../test/search/relevance-set.json', import.meta.url).pathname },
    by: { type: 'string', default: 'kind' },
    embedder: { type: 'string' },
    index: { type: 'string' },
    part: { type: 'string' },
    save: { type: 'string' },
    against: { type: 'string' },
    'by-query': { type: 'boolean', default: false },
    'no-peers': { type: 'boolean', default: false },
    'no-word-relatives': { type: 'boolean', default: false },
    'word-relatives': { type: 'string' },
  },
})
// `--set 2` and `--set 3`: the project's other sets by their number.
if (/^[0-9]+$/.test(options.set)) options.set = new URL(`../test/search/relevance-set-${options.set}.json`, import.meta.url).pathname
const queries = readRelevanceSet(resolve(options.set))
  .filter((query) => options.part === undefined || query.part === options.part)
  .map((query) => (options.by === 'kind' ? query : { ...query, kind: String(query[options.by] ?? '-') }))
// The project's kinds in their order, then any other kind a set names.
const kinds = [...new Set([...KINDS.filter((kind) => queries.some((query) => query.kind === kind)), ...queries.map((query) => query.kind)])]
const ANSWERED = kinds.filter((kind) => kind !== 'none')
const answered = (query) => Object.keys(query.relevant).length > 0

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

const nicknames = await loadNicknames()
const relatives = options['no-word-relatives']
  ? undefined
  : options['word-relatives'] !== undefined
    ? parseWordRelatives(gunzipSync(readFileSync(options['word-relatives'])).toString('utf8'))
    : await loadWordRelatives()
const texts = createEntityTexts({ blobs })
/** Search over `index` as `serve` runs it: the renditions' texts indexed as passages too. */
async function entityRegistry(index, embedder) {
  await createIndexer({ store, index, embedder, texts }).catchUp()
  const search = createSearch(store, { index, embedder, nicknames, relatives })
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

const lancedbDirectory = mkdtempSync(join(tmpdir(), 'er-relevance-'))
const databases = []
const lancedbIndexes = []
/** The index inside PostgreSQL, on a PGlite of its own. */
async function postgresIndex(Constructor, extensions, dimensions) {
  const db = new Kysely({ dialect: new PGliteDialect({ pglite: new Constructor({ extensions }) }) })
  databases.push(db)
  return createPostgresSearchIndex({ db, dimensions })
}
const pgliteVector = await Promise.all([import('pglite-vector'), import('pglite-vector/vector'), import('pglite-vector/contrib/pg_trgm')]).catch(() => null)

/**
 * The three indexes under one embedder, named `<index>, <condition>`. LanceDB needs a vector column
 * (`serve` refuses it `--embedder none`): without vectors it holds zero vectors of one dimension,
 * which search never looks up, so that its full text is compared with the others'.
 */
async function indexesWith(embedder, condition) {
  const wanted = (name) => options.index === undefined || options.index === name
  const engines = {}
  if (wanted('lancedb')) {
    const lancedb = await createLancedbSearchIndex({ uri: join(lancedbDirectory, condition), dimensions: Math.max(1, embedder.dimensions) })
    lancedbIndexes.push(lancedb)
    const zeros = { ...embedder, dimensions: 1, embed: async (texts) => texts.map(() => new Float32Array(1)) }
    engines[`LanceDB, ${condition}`] = await entityRegistry(lancedb, embedder.dimensions > 0 ? embedder : zeros)
  }
  if (wanted('postgres') && embedder.dimensions === 0) engines[`PostgreSQL, ${condition}`] = await entityRegistry(await postgresIndex(PGlite, { pg_trgm }, 0), embedder)
  if (wanted('postgres') && embedder.dimensions > 0 && pgliteVector !== null) {
    const index = await postgresIndex(pgliteVector[0].PGlite, { vector: pgliteVector[1].vector, pg_trgm: pgliteVector[2].pg_trgm }, embedder.dimensions)
    engines[`PostgreSQL, ${condition}`] = await entityRegistry(index, embedder)
  }
  if (wanted('memory')) engines[`memory, ${condition}`] = await entityRegistry(createMemorySearchIndex(), embedder)
  return engines
}
/** The embedder of the `vectors` condition: the default, or the candidate `--embedder` names. */
async function vectorsEmbedder(name = 'default') {
  if (name === 'default' || name === 'none') return createWordVectorEmbedder()
  if (name.startsWith('transformers:')) return createTransformersEmbedder({ modelPath: name.slice('transformers:'.length) })
  if (name.startsWith('module:')) return (await import(pathToFileURL(resolve(name.slice('module:'.length))).href)).createEmbedder()
  throw new Error(`--embedder is default, none, transformers:DIR or module:FILE, not ${name}`)
}
const conditions = { vectors: await vectorsEmbedder(options.embedder), none: createNoEmbedder() }
const chosen = options.embedder === undefined ? ['vectors', 'none'] : [options.embedder === 'none' ? 'none' : 'vectors']
const engines = {}
for (const condition of chosen) Object.assign(engines, await indexesWith(conditions[condition], condition))
if (!options['no-peers']) {
  const miniSearch = new MiniSearch({ fields: FIELDS, searchOptions: { prefix: true, fuzzy: 0.2, boost: BOOSTS } })
  miniSearch.addAll(documents.map(fieldsOf))
  const orama = create({ schema: Object.fromEntries(FIELDS.map((field) => [field, 'string'])) })
  await insertMultiple(orama, documents.map(fieldsOf))
  engines['MiniSearch 7 (prefix, fuzzy 0.2, boosts)'] = peer(async (words) => miniSearch.search(words).map((hit) => hit.id))
  engines['Orama 3 (tolerance 1, boosts)'] = peer(async (words) => (await oramaSearch(orama, { term: words, properties: FIELDS, boost: BOOSTS, tolerance: 1, limit: 1000 })).hits.map((hit) => hit.id))
}

/** Every query's figures for every engine: nDCG@10 (queries with an answer) or the result count (none), and the top 10. */
const judged = {}
for (const [name, rank] of Object.entries(engines)) {
  judged[name] = {}
  for (const query of queries) {
    const ranking = await rank(query.q)
    judged[name][query.q] = { ...judge(query, ranking), top10: ranking.slice(0, 10) }
  }
}

const fixed = (value, digits = 3) => (value === null || value === undefined ? '-' : value.toFixed(digits))
const mean = (values) => (values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0) / values.length)
/** The queries of `part` of `kind` that have an answer (`all`: of every kind); `none`: those that have none. */
const selected = (part, kind) =>
  queries.filter((query) => query.part === part && (kind === 'none' ? !answered(query) : answered(query) && (kind === 'all' || query.kind === kind)))
/** A figure and its interval: nDCG@10, or the mean result count of no-answer queries. */
function cell(name, part, kind) {
  const values = selected(part, kind).map((query) => (kind === 'none' ? judged[name][query.q].results : judged[name][query.q].ndcg10))
  if (values.length === 0) return '-'
  const [low, high] = bootstrapInterval(values)
  const digits = kind === 'none' ? 1 : 2
  return `${fixed(mean(values), kind === 'none' ? 1 : 3)} (${fixed(low, digits)}-${fixed(high, digits)})`
}

console.log(`machine: ${machine()}`)
console.log(`set: ${options.set}`)
if (chosen.includes('vectors')) console.log(`vectors: ${conditions.vectors.id}`)
if (pgliteVector === null) console.log('PostgreSQL with vectors left out: install the devDependency "pglite-vector": "npm:@electric-sql/pglite@0.4.6"')
for (const part of PARTS) {
  const inPart = queries.filter((query) => query.part === part)
  if (inPart.length === 0) continue
  console.log(`\n${part}: ${inPart.length} queries (${[...ANSWERED, 'none'].map((kind) => `${kind} ${selected(part, kind).length}`).join(', ')})`)
  console.log('nDCG@10 (bootstrap 95% interval, 1000 resamples of the queries); no answer: mean results\n')
  console.log(`| engine | all | ${ANSWERED.join(' | ')} | no answer |`)
  console.log(`|---|---|${ANSWERED.map(() => '---|').join('')}---|`)
  for (const name of Object.keys(engines)) console.log(`| ${name} | ${['all', ...ANSWERED, 'none'].map((kind) => cell(name, part, kind)).join(' | ')} |`)
}

// Parity: the three indexes under one embedder rank alike.
console.log('\nParity of the indexes (largest difference of nDCG@10 over all, each part; queries whose top 10 differ)\n')
for (const condition of chosen) {
  const names = Object.keys(engines).filter((name) => name.endsWith(`, ${condition}`))
  const spread = PARTS.filter((part) => selected(part, 'all').length > 0).map((part) => {
    const figures = names.map((name) => mean(selected(part, 'all').map((query) => judged[name][query.q].ndcg10)) ?? 0)
    return `${part} ${fixed(Math.max(...figures) - Math.min(...figures))}`
  })
  // Ties (in BM25 score or vector distance) may come in another order: those that change a figure are named.
  const reordered = queries.filter((query) => new Set(names.map((name) => judged[name][query.q].top10.join(' '))).size > 1)
  const judgedOtherwise = reordered.filter((query) => new Set(names.map((name) => fixed(judged[name][query.q].ndcg10 ?? judged[name][query.q].results))).size > 1)
  const named = judgedOtherwise.map((query) => `${query.q} (${names.map((name) => fixed(judged[name][query.q].ndcg10 ?? judged[name][query.q].results, 2)).join(' / ')})`)
  console.log(`- ${names.join(' / ')}: ${spread.join(', ')}; top 10 in another order for ${reordered.length} of ${queries.length} queries, judged otherwise for ${judgedOtherwise.length}${named.length === 0 ? '' : `: ${named.join('; ')}`}`)
}

if (options.save !== undefined) {
  writeFileSync(options.save, `${JSON.stringify({ set: options.set, judged }, null, 1)}\n`)
  console.log(`\nevery query's figures written to ${options.save}`)
}

// A change against a saved run, query by query, each part: nDCG@10 over all and by kind, and the
// result count of no-answer queries (up there is worse). Kept when nothing goes the wrong way beyond
// the noise on either part and the held-out part's nDCG@10 does not fall.
if (options.against !== undefined) {
  const before = JSON.parse(readFileSync(options.against, 'utf8')).judged
  console.log(`\nAgainst ${options.against}: mean difference (paired bootstrap 95% interval), up / down / noise\n`)
  console.log(`| engine | part | nDCG@10 all | ${ANSWERED.join(' | ')} | no answer: results | kept? |`)
  console.log(`|---|---|---|${ANSWERED.map(() => '---|').join('')}---|---|`)
  const show = ({ mean: difference, interval, verdict }) => (interval === null ? '-' : `${difference >= 0 ? '+' : ''}${fixed(difference)} (${fixed(interval[0], 2)}..${fixed(interval[1], 2)}) ${verdict}`)
  for (const name of Object.keys(engines)) {
    if (before[name] === undefined) continue
    const compared = (part, kind) => {
      const key = kind === 'none' ? 'results' : 'ndcg10'
      const asked = selected(part, kind).filter((query) => before[name][query.q] !== undefined)
      return pairedDifference(asked.map((query) => before[name][query.q][key]), asked.map((query) => judged[name][query.q][key]))
    }
    const rows = PARTS.map((part) => ({ part, all: compared(part, 'all'), kinds: ANSWERED.map((kind) => compared(part, kind)), none: compared(part, 'none') }))
    const kept = rows.every((row) => [row.all, ...row.kinds].every((difference) => difference.verdict !== 'down') && row.none.verdict !== 'up') && rows[1].all.mean >= 0
    // Without the held-out part (`--part dev`), nothing is decided.
    const verdict = rows[1].all.interval === null ? '-' : kept ? 'yes' : 'no'
    for (const row of rows) console.log(`| ${name} | ${row.part} | ${[row.all, ...row.kinds, row.none].map(show).join(' | ')} | ${verdict} |`)
  }
}

if (options['by-query']) {
  console.log(`\n| query | kind | part | ${Object.keys(engines).join(' | ')} |`)
  console.log(`|---|---|---|${Object.keys(engines).map(() => '---|').join('')}`)
  for (const query of queries) {
    const cells = Object.keys(engines).map((name) => {
      const figures = judged[name][query.q]
      return figures.ndcg10 === undefined ? `${figures.results} results` : figures.ndcg10.toFixed(2)
    })
    console.log(`| ${query.q} | ${query.kind} | ${query.part} | ${cells.join(' | ')} |`)
  }
}
for (const index of lancedbIndexes) await index.close()
for (const db of databases) await db.destroy()
rmSync(lancedbDirectory, { recursive: true, force: true })
