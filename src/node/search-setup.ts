import { join, resolve } from 'node:path'
import { createTransformersEmbedder, createWordVectorEmbedder } from '../embedders/index.js'
import type { Embedder } from '../ports/embedder.js'
import { createLancedbSearchIndex } from '../lancedb/index.js'
import type { EntityStore } from '../ports/entity-store.js'
import { createIndexer, otherEmbedderOf, type Indexer, type IndexerOptions } from '../search/indexer.js'
import { createSearch, type Search } from '../search/search-service.js'
import { EMBEDDER_NAMES, parseEmbedderName } from './embedder-name.js'
import { loadNicknames } from './nicknames.js'

export interface SearchSetup {
  search: Search
  indexer: Indexer
  close(): Promise<void>
}

/** Where the CLI keeps the search index: `--search` (a directory or a LanceDB URI), else `<data>/search`. */
export function searchLocation(options: { data: string; search?: string }): string {
  return options.search ?? join(resolve(options.data), 'search')
}

/**
 * The embedder an `--embedder` value names: `words` (the default, the bundled word vectors) or
 * `transformers:DIR` (a transformers.js model in DIR; `@huggingface/transformers` installed).
 */
export function embedderNamed(name = 'words'): Embedder {
  const named = parseEmbedderName(name)
  if (named === null) throw new Error(`unknown embedder "${name}": use ${EMBEDDER_NAMES}`)
  return named.kind === 'words' ? createWordVectorEmbedder() : createTransformersEmbedder({ modelPath: named.modelPath })
}

/**
 * The LanceDB index, kept current from the store's feed by an indexer. To serve (`rebuilding`
 * false), the index must have been built by the same embedder: another one's vectors would answer
 * every search with an error, so it is refused here, saying how to rebuild it.
 */
export async function openSearch(
  store: EntityStore,
  uri: string,
  { onProgress, embedderName, rebuilding = false }: Pick<IndexerOptions, 'onProgress'> & { embedderName?: string; rebuilding?: boolean } = {},
): Promise<SearchSetup> {
  const embedder = embedderNamed(embedderName)
  const index = await createLancedbSearchIndex({ uri, dimensions: embedder.dimensions })
  const other = rebuilding ? null : otherEmbedderOf(await index.state(), embedder)
  if (other !== null) {
    await index.close()
    throw new Error(`the index at ${uri} was built with the embedder ${other}, not ${embedder.id}: run entity-registry reindex --embedder ${embedderName ?? 'words'}`)
  }
  const indexer = createIndexer({ store, index, embedder, ...(onProgress ? { onProgress } : {}) })
  return {
    search: createSearch(store, { index, embedder, lag: () => indexer.lag(), nicknames: await loadNicknames() }),
    indexer,
    async close() {
      await indexer.stop()
      await index.close()
    },
  }
}

