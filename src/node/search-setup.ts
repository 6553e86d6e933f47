import { join, resolve } from 'node:path'
import { createNoEmbedder, createTransformersEmbedder, createWordVectorEmbedder } from '../embedders/index.js'
import type { KyselyStore } from '../kysely/index.js'
import type { Embedder } from '../ports/embedder.js'
import type { BlobStore } from '../ports/blob-store.js'
import type { SearchIndex } from '../ports/search-index.js'
import { createEntityTexts } from '../texts/entity-texts.js'
import { createResidentSearchIndex, type ResidentSearchIndex } from '../resident/index.js'
import { builtWorkerScript, createWorkerTextExtractor } from './text-worker.js'
import { changedEntities, createIndexer, indexLag, otherEmbedderOf, type Indexer, type IndexerOptions } from '../search/indexer.js'
import { createSearch, type Search } from '../search/search-service.js'
import { EMBEDDER_NAMES, parseEmbedderName } from './embedder-name.js'
import { loadNicknames } from './nicknames.js'
import { loadWordRelatives } from './word-relatives.js'
import { SEARCH_IN_DATABASE } from './search-in-database.js'
import type { IndexingLock } from '../postgres-search/index.js'
import { SEARCH_BUILT_WITHIN } from '../telemetry/readiness.js'
import { SEARCH_INDEX_LAG_HEADER } from '../http/search.js'

export interface SearchSetup {
  search: Search
  indexer: Indexer
  /**
   * How far what search serves is behind the feed it serves: the indexer's lag; over a replica, the
   * index inside the database against the feed as the replica holds both (read there, not on the
   * primary; an index is built once the replica holds it built).
   */
  servedLag: Pick<Indexer, 'lag' | 'lagSeconds' | 'buildLag'>
  /**
   * Keeps the index current from the feed in the background. `shared`: the index is inside the
   * store's PostgreSQL database, which every instance over it shares: only the instance holding its
   * indexing lease indexes, the others search what it writes.
   */
  follow(options?: { shared?: boolean; print?: (line: string) => void }): Promise<void>
  close(): Promise<void>
}

/** Where the CLI keeps the search index: `--search` (a directory, a LanceDB URI, or `postgres`), else `<data>/search`. */
export function searchLocation(options: { data: string; search?: string }): string {
  return options.search ?? join(resolve(options.data), 'search')
}

/**
 * The embedder an `--embedder` value names: `words` (the default, the bundled word vectors),
 * `transformers:DIR` (a transformers.js model in DIR; `@huggingface/transformers` installed) or
 * `none` (no vectors).
 */
export function embedderNamed(name = 'words'): Embedder {
  const named = parseEmbedderName(name)
  if (named === null) throw new Error(`unknown embedder "${name}": use ${EMBEDDER_NAMES}`)
  if (named.kind === 'transformers') return createTransformersEmbedder({ modelPath: named.modelPath })
  return named.kind === 'words' ? createWordVectorEmbedder() : createNoEmbedder()
}

/**
 * The index `uri` names: inside the store's database (`postgres`), else LanceDB. Each is loaded
 * only when named: the PostgreSQL one loads no native library. With `inMemory`, the resident index
 * in front of it; in front of PostgreSQL's, it follows what other instances write there.
 */
async function openIndex(store: KyselyStore, uri: string, embedder: Embedder, inMemory?: OpenSearchOptions['inMemory']): Promise<SearchIndex | ResidentSearchIndex> {
  const { dimensions } = embedder
  if (uri === SEARCH_IN_DATABASE) {
    const { createPostgresSearchIndex } = await import('../postgres-search/index.js')
    const inDatabase = await createPostgresSearchIndex({ db: store.db, readDb: store.readDb, dimensions })
    return inMemory ? createResidentSearchIndex({ behind: inDatabase, dimensions, othersWrite: true, onLoaded: inMemory }) : inDatabase
  }
  if (dimensions === 0) throw new Error(`the embedder ${embedder.id} makes no vectors, which only the index inside PostgreSQL (--search postgres) can do without`)
  const { createLancedbSearchIndex } = await import('../lancedb/index.js')
  const onDisk = await createLancedbSearchIndex({ uri, dimensions })
  return inMemory ? createResidentSearchIndex({ behind: onDisk, dimensions, onLoaded: inMemory }) : onDisk
}

/** How often an index in memory in front of a shared one (PostgreSQL's) looks for what other instances wrote there. */
const FOLLOW_INTERVAL_MS = 250

/**
 * The search index, kept current from the store's feed by an indexer. To serve (`rebuilding`
 * false), the index must have been built by the same embedder: another one's vectors would answer
 * every search with an error, so it is refused here, saying how to rebuild it.
 */
export interface OpenSearchOptions {
  /** The indexer's progress (`IndexerOptions.onProgress`). */
  onProgress?: IndexerOptions['onProgress']
  embedderName?: string
  rebuilding?: boolean
  /**
   * Where renditions' bytes are: given, their texts are extracted (in a worker thread) and searched
   * as passages (`IndexerOptions.texts`); a rendition that cannot be read goes to `warn`.
   */
  blobs?: BlobStore
  warn?: (message: string) => void
  /**
   * Given, the index is also kept in memory (`createResidentSearchIndex`): told once it has loaded.
   * A LanceDB index's is kept current by the process's indexer, which alone writes it; one in front
   * of the index inside PostgreSQL, shared, takes in what the indexing instance writes there too (`follow`).
   */
  inMemory?: (loaded: { entities: number; milliseconds: number }) => void
  /** Search a query whose words no entity's own fields hold by their WordNet relatives too (`loadWordRelatives`); default true. */
  wordRelatives?: boolean
  /** Rank the people of the US states a query names higher (`SearchOptions.places`); default true. */
  places?: boolean
}

/** The options `serve` and `reindex` open search with: the embedder they name, the texts read from `blobs`, words' relatives and places unless told not to. */
export function searchOptionsOf(
  { embedder, indexTexts, wordRelatives, places }: { embedder?: string; indexTexts?: boolean; wordRelatives?: boolean; places?: boolean },
  blobs: BlobStore,
  warn: (message: string) => void,
): OpenSearchOptions {
  return {
    ...(embedder ? { embedderName: embedder } : {}),
    ...(indexTexts === false ? {} : { blobs, warn }),
    ...(wordRelatives === false ? { wordRelatives } : {}),
    ...(places === false ? { places } : {}),
  }
}

export async function openSearch(store: KyselyStore, uri: string, { onProgress, embedderName, rebuilding = false, blobs, warn, inMemory, wordRelatives = true, places = true }: OpenSearchOptions = {}): Promise<SearchSetup> {
  const embedder = embedderNamed(embedderName)
  const index = await openIndex(store, uri, embedder, inMemory)
  const other = rebuilding ? null : otherEmbedderOf(await index.state(), embedder)
  if (other !== null) {
    await index.close()
    throw new Error(`the index ${uri === SEARCH_IN_DATABASE ? 'in the database' : `at ${uri}`} was built with the embedder ${other}, not ${embedder.id}: run entity-registry reindex --embedder ${embedderName ?? 'words'}`)
  }
  const script = builtWorkerScript()
  // Run from the sources (no build), extraction runs in this thread.
  const worker = blobs && script ? createWorkerTextExtractor({ script }) : undefined
  const indexer = createIndexer({
    // The index inside the database is written beside the feed: its indexer reads the feed there
    // (the primary), not from a replica behind it. A LanceDB index follows the store it answers from.
    store: uri === SEARCH_IN_DATABASE ? store.primary : store,
    index,
    embedder,
    ...(blobs ? { texts: createEntityTexts({ blobs, ...(worker ? { extract: worker.extract } : {}), ...(warn ? { warn } : {}) }) } : {}),
    ...(onProgress ? { onProgress } : {}),
  })
  const onReplica = uri === SEARCH_IN_DATABASE && store.readDb !== store.db ? await lagOnReplica(store) : null
  const resident = 'follow' in index && uri === SEARCH_IN_DATABASE ? index : null
  const servedLag = resident !== null ? residentLag(resident, store, onReplica ?? indexer) : (onReplica ?? indexer)
  let lock: IndexingLock | undefined
  let following: ReturnType<typeof setTimeout> | undefined
  let closed = false
  return {
    search: createSearch(store, { index, embedder, lag: () => servedLag.lag(), nicknames: await loadNicknames(), places, ...(wordRelatives ? { relatives: await loadWordRelatives() } : {}) }),
    indexer,
    servedLag,
    async follow({ shared = false, print: say = () => {} } = {}) {
      if (!shared) {
        // A short backlog is applied before the index answers (the first search would miss it);
        // over a long one (an index being built) search answers from what is indexed so far.
        const behind = await indexer.lag()
        if (behind > SEARCH_BUILT_WITHIN) say(`search index: ${behind.toLocaleString('en')} changes of the feed to index; search answers from what is indexed so far (its ${SEARCH_INDEX_LAG_HEADER} header says how far behind)`)
        else if (behind > 0 && (await indexer.catchUp().then(() => true, () => false))) say(`search index: ${behind.toLocaleString('en')} changes of the feed indexed`)
        indexer.start()
        return
      }
      if (resident !== null) {
        // What the indexing instance writes, taken in here (nothing, when it is this one: its writes go through).
        const changed = changedEntities(store.primary)
        const tick = () => {
          void resident
            .follow(changed)
            .catch(() => undefined)
            .finally(() => {
              if (!closed) following = setTimeout(tick, FOLLOW_INTERVAL_MS)
            })
        }
        tick()
      }
      const { followIndexingLock } = await import('../postgres-search/index.js')
      lock = await followIndexingLock({
        db: store.db,
        onAcquired: () => {
          say('search index: this instance indexes the shared index (it holds the indexing lock)')
          indexer.start()
        },
        onLost: () => {
          say('search index: this instance lost the indexing lock and stopped indexing')
          void indexer.stop()
        },
      })
      if (!lock.held()) say('search index: another instance indexes the shared index; this one searches it')
    },
    async close() {
      closed = true
      clearTimeout(following)
      await indexer.stop()
      await lock?.close()
      await worker?.close()
      await index.close()
    },
  }
}

/**
 * The lag of what a resident index in front of the index inside the database answers from: what it
 * holds against the store's feed, once loaded; before, that of the index behind (`behind`: as the
 * replica holds it, or the indexer's).
 */
function residentLag(resident: ResidentSearchIndex, store: KyselyStore, behind: SearchSetup['servedLag']): SearchSetup['servedLag'] {
  // Loaded again between the choice and the read (an index rebuilt elsewhere): the whole feed, once.
  const held = indexLag({ state: async () => resident.heldState() ?? { cursor: null, embedderId: null } }, store)
  const answering = () => (resident.heldState() === null ? behind : { ...held, buildLag: held.lag })
  return { lag: () => answering().lag(), lagSeconds: () => answering().lagSeconds(), buildLag: () => answering().buildLag() }
}

/** The lag of the index inside the database as the store's replica holds it, with the feed it holds. */
async function lagOnReplica(store: KyselyStore): Promise<SearchSetup['servedLag']> {
  const { readIndexState } = await import('../postgres-search/postgres-search-index.js')
  const lag = indexLag({ state: () => readIndexState(store.readDb) }, store)
  return { ...lag, buildLag: lag.lag }
}
