// Relevance of search over the demo data (test/search/relevance-set.json): hybrid against its two
// sides alone, by MRR, nDCG@10 and queries with a relevant entity in the top 5. Also the default
// embedder's load time and throughput. `node bench/search-relevance.mjs` after `npm run build`.
import { readFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import { createIndexer, createSearch, parseGffs, tokenize } from '../dist/index.js'
import { createWordVectorEmbedder } from '../dist/embedders/index.js'
import { createMemoryBlobStore, createMemorySearchIndex, createMemoryStore } from '../dist/memory/index.js'
import { importNdjson } from '../dist/node/index.js'
import { measure, RELEVANCE_SET as queries } from '../test/search/relevance.mjs'
import { machine } from './lib.mjs'

const demo = new URL('../demo/', import.meta.url).pathname
const store = createMemoryStore()
await importNdjson(readFileSync(`${demo}entities.jsonl`, 'utf8').split('\n'), { warehouse: store.warehouse, blobs: createMemoryBlobStore(), baseDir: demo })

const embedder = createWordVectorEmbedder()
let started = performance.now()
await embedder.embed(['warm'])
const loadMs = performance.now() - started
const texts = queries.map((query) => query.q)
started = performance.now()
for (let round = 0; round < 200; round++) await embedder.embed(texts)
const perSecond = (200 * texts.length) / ((performance.now() - started) / 1000)

const index = createMemorySearchIndex()
await createIndexer({ store, index, embedder }).catchUp()
const search = createSearch(store, { index, embedder })
const rankings = {
  hybrid: async (q) => (await search.search(parseGffs(q, { allowFreeText: true }))).map((entity) => entity.id),
  'full text (BM25) alone': async (q) => index.fullText(parseGffs(q, { allowFreeText: true }).text.map((term) => tokenize(term.text)), [], 100),
  'vectors alone': async (q) => index.nearest((await embedder.embed([q]))[0], [], 100),
}

console.log(`machine: ${machine()}`)
console.log(`default embedder: cache loaded in ${loadMs.toFixed(0)} ms, ${Math.round(perSecond)} texts/s\n`)
console.log('| ranking | all queries: MRR | nDCG@10 | top 5 | held back (no shared word): MRR | nDCG@10 | top 5 |')
console.log('|---|---|---|---|---|---|---|')
for (const [name, rank] of Object.entries(rankings)) {
  const row = ({ mrr, ndcg10, top5, queries: count }) => `${mrr.toFixed(3)} | ${ndcg10.toFixed(3)} | ${top5}/${count}`
  console.log(`| ${name} | ${row(await measure(queries, rank))} | ${row(await measure(queries.filter((q) => q.heldBack), rank))} |`)
}
