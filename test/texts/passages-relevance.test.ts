/**
 * Search with the renditions' texts against search without them, on the relevance set: a file of its
 * own, the longest of the texts' suites, so that it runs beside the others (CI time).
 */
import { describe, expect, it } from 'vitest'
import { createWordVectorEmbedder } from '../../src/embedders/index.js'
import { parseGffs } from '../../src/gffs/parse.js'
import { createMemoryBlobStore } from '../../src/memory/memory-blob-store.js'
import { createMemoryStore } from '../../src/memory/memory-store.js'
import { loadNicknames } from '../../src/node/nicknames.js'
import { createIndexer } from '../../src/search/indexer.js'
import { createSearch } from '../../src/search/search-service.js'
import { createEntityTexts } from '../../src/texts/entity-texts.js'
import { importDemo } from '../support/demo.js'
import { searchIndexKinds } from '../search/each-search-index.js'
import { KINDS, measureByKind, RELEVANCE_SET } from '../search/relevance.mjs'

const embedder = createWordVectorEmbedder()
const runnable = searchIndexKinds.filter((kind) => kind.skipReason === null)

describe('relevance with passages', () => {
  // The indexes that rank by meaning too, as search is served; the full-text-only PostgreSQL kinds run
  // the same code as pglite-vector, and "search indexes agree on passages" holds them to its finds.
  // The resident index ranks as the memory index and LanceDB do (its passages are LanceDB's):
  // test/search/resident-index.test.ts compares it query by query. Each would only cost CI time here.
  const measured = runnable.filter((kind) => kind.semantic && kind.name !== 'resident')
  it('finds every bill of the texts queries by its text\'s words; the other kinds as before on names, a little worse on paraphrases', async () => {
    const store = createMemoryStore()
    const blobs = await importDemo(store.warehouse, createMemoryBlobStore())
    const nicknames = await loadNicknames()
    const figures: Record<string, Awaited<ReturnType<typeof measureByKind>>> = {}
    for (const kind of measured) {
      for (const passages of [false, true]) {
        const { index, dispose } = await kind.open(embedder.dimensions)
        await createIndexer({ store, index, embedder, ...(passages ? { texts: createEntityTexts({ blobs }) } : {}) }).catchUp()
        const search = createSearch(store, { index, embedder, nicknames })
        figures[`${kind.name}${passages ? ' passages' : ''}`] = await measureByKind(RELEVANCE_SET, async (q) => (await search.search(parseGffs(q, { allowFreeText: true }))).map((entity) => entity.id))
        await dispose()
      }
    }
    for (const kind of measured) {
      const [without, withPassages] = [figures[kind.name]!, figures[`${kind.name} passages`]!]
      expect(withPassages.texts.top5, kind.name).toBe(11)
      expect(withPassages.all.ndcg10!, kind.name).toBeGreaterThan(without.all.ndcg10! + 0.05)
      // As good on what names an entity; a little worse on paraphrases and concepts (bench/README.md).
      for (const same of ['exact', 'qualifiers'] as const) expect(withPassages[same].ndcg10!, `${kind.name} ${same}`).toBeGreaterThanOrEqual(without[same].ndcg10!)
      for (const other of KINDS.filter((name) => name !== 'texts' && name !== 'none')) expect(withPassages[other].ndcg10!, `${kind.name} ${other}`).toBeGreaterThanOrEqual(without[other].ndcg10! - 0.05)
      expect(withPassages.none.results!, kind.name).toBeLessThanOrEqual(without.none.results! + 0.5)
    }
  }, 300_000)
})
