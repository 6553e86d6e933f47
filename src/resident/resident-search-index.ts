import { setNewest } from '../bounded-map.js'
import type { Qualifier } from '../gffs/types.js'
import type { IndexState, SearchIndex } from '../ports/search-index.js'
import { withPassageText } from '../search/passage-ranks.js'
import { Documents } from './documents.js'
import { HeldPassages } from './held-passages.js'
import { type Prefilter, prefilterOf } from './prefilter.js'
import { MOST_RANKED_WORDS, rankText } from './text-ranking.js'
import { VectorPartitions } from './vector-partitions.js'
import { allowedSlots } from './vector-ranking.js'

/** How long `follow` waits after a load that failed (the index behind unreachable) before it loads again. */
const RELOAD_AFTER_FAILURE_MS = 30_000

/** How many qualifiers' prefilters the index keeps between writes: each keeps at most `exactVectorsUpTo` slots (240 KB at the default; their vectors gathered: `VectorPartitions`). */
const KEPT_PREFILTERS = 32

export interface ResidentSearchIndexOptions {
  /** The index kept on disk (LanceDB), which the resident one loads from (`SearchIndex.scan`) and writes through to. */
  behind: SearchIndex
  /** The vector size of the embedder that fills the index. */
  dimensions: number
  /**
   * The most rows a prefilter may keep for the nearest vectors to be found among them alone; a
   * broader one (or none) has the partitions of vectors scanned, as many vectors as this at least
   * (default 60,000: an index that small is searched exactly).
   */
  exactVectorsUpTo?: number
  /**
   * The most passages of texts held in memory too (default 2,000: some 400,000 words, 25 MB); past it
   * the index behind ranks them (`SearchIndex.passageText`), as it does whatever their number when
   * it cannot scan them.
   */
  passagesHeldUpTo?: number
  /**
   * The most entities whose titles, names and local identifiers are held in memory too (default
   * 100,000: about 20 MB, titles of 60 characters), for qualifiers on them (`title:~act`) to be
   * answered here; past it, at load or once writes bring more, the index behind answers those (the
   * values are as many as the entities).
   */
  wideFieldsHeldUpTo?: number
  /**
   * Whether other processes write the index behind too (a PostgreSQL index that every instance over
   * the database shares, only one of them indexing at a time): its state is then read from it each
   * time it is asked, and what they write is taken in by `follow` (which needs `entitiesOf` of it).
   */
  othersWrite?: boolean
  /** Told when the index is loaded: its entities and the milliseconds it took, of which its vectors' partitions took `partitioning`. */
  onLoaded?: (loaded: { entities: number; milliseconds: number; partitioning: number }) => void
}

/** The entities changed between two states of an index, by their cursors (the feed's): after `after`, up to `through` at least. */
export type ChangedEntities = (after: string | null, through: string | null) => Promise<string[]>

export interface ResidentSearchIndex extends SearchIndex {
  /**
   * Takes in what other processes wrote to the index behind (`othersWrite`) since the state this
   * index holds: the entities `changed` names between the two, read from it again (`entitiesOf`).
   * An index behind whose state went back (emptied, then built again) is loaded again. Returns how
   * many entities it read.
   */
  follow(changed: ChangedEntities): Promise<number>
  /** The state of what this index holds once loaded; null while the index behind answers searches (it loads, or could not). */
  heldState(): IndexState | null
}

/**
 * A search index resident in memory, in front of the one on disk: the terms' postings, the fields
 * that prefilters name and the vectors as Int8, loaded from the index behind when it opens and kept
 * current by the same writes (the indexer's `apply`, written through). It ranks full text as the
 * memory index does, a term at a time over postings, the nearest vectors exactly among the rows a
 * selective prefilter keeps, and with no or a broad prefilter over partitions of the vectors
 * (`VectorPartitions`: LanceDB's own reached a recall of 0.90 at several times the CPU). The rest
 * goes to the index behind: qualifiers on titles, names and identifiers once the entities are more
 * than `wideFieldsHeldUpTo` (fewer, their values are held here too), search while it loads, and the
 * passages of texts once more than `passagesHeldUpTo` (ranked by the index behind, merged here as it
 * merges them: `SearchIndex.passageText`; fewer are held and ranked here, as the memory index ranks
 * them: `HeldPassages`). What another process writes to the index behind is seen here only with
 * `othersWrite`, through `follow` (a PostgreSQL index that every instance over the database shares);
 * a LanceDB directory has one writer, the `serve` that indexes it.
 */
export async function createResidentSearchIndex(options: ResidentSearchIndexOptions): Promise<ResidentSearchIndex> {
  const { behind, dimensions, exactVectorsUpTo = 60_000, passagesHeldUpTo = 2_000, wideFieldsHeldUpTo = 100_000, othersWrite = false, onLoaded } = options
  if (othersWrite && behind.entitiesOf === undefined) throw new Error('an index that others write too is followed by reading its entities again: the index behind has no entitiesOf')
  /** Made by `startLoading`, below. */
  let documents: Documents
  /** The vectors' partitions, made once the documents are loaded (none without vectors). */
  let partitions: VectorPartitions | null = null
  const withPassages = new Set<string>()
  /** The passages, while they are no more than `passagesHeldUpTo` (null: the index behind ranks them). */
  let heldPassages: HeldPassages | null = new HeldPassages()
  /** Writes made while the index loads, applied over what it loaded once it has (each write is a replacement: applied twice, the same). */
  let pending: Parameters<SearchIndex['apply']>[0][] = []
  let status: 'loading' | 'ready' | 'failed' = 'loading'
  /** When the last load failed: with `othersWrite`, `follow` loads again once `RELOAD_AFTER_FAILURE_MS` have passed. */
  let failedAt = 0
  /** The state of what the documents hold: read from the index behind before it was scanned, then each write's. */
  let held: IndexState = { cursor: null, embedderId: null }

  /**
   * The prefilters of the `KEPT_PREFILTERS` qualifiers last asked, until the next write (a filter
   * cache, as search engines keep one; never a query's results): a search asks both rankings with
   * the same qualifiers, and searches ask the same few again (a type, a jurisdiction), while what a
   * prefilter keeps cost 5 ms to count at 1,000,000 entities (`allowedSlots`). The most recently
   * asked last (`setNewest`).
   */
  const prefilters = new Map<string, Prefilter | null>()
  function prefilterFor(qualifiers: readonly Qualifier[]): Prefilter | null {
    const key = JSON.stringify(qualifiers)
    const prefilter = prefilters.has(key) ? (prefilters.get(key) as Prefilter | null) : prefilterOf(documents, qualifiers)
    setNewest(prefilters, key, prefilter, KEPT_PREFILTERS)
    return prefilter
  }

  function applyHere({ upserts, removals, state }: Parameters<SearchIndex['apply']>[0]) {
    held = state
    prefilters.clear()
    for (const id of removals) {
      documents.remove(id)
      withPassages.delete(id)
      heldPassages?.remove(id)
    }
    for (const entity of upserts) {
      documents.put(entity)
      partitions?.add(documents.slotOf(entity.id)!)
      if ((entity.passages?.length ?? 0) > 0) withPassages.add(entity.id)
      else withPassages.delete(entity.id)
      heldPassages?.put(entity.id, entity.passages ?? [])
    }
    // Once past the most held, the index behind ranks the passages, and answers qualifiers on the
    // wide fields (until the index is loaded again).
    if (heldPassages !== null && heldPassages.count > passagesHeldUpTo) heldPassages = null
    if (documents.live > wideFieldsHeldUpTo) documents.letWideFieldsGo()
    // Dead slots hold postings and vectors until the documents are made again from the live ones.
    if (documents.dead > Math.max(10_000, documents.live)) {
      documents = compacted(documents)
      if (partitions !== null) partitions = VectorPartitions.around(documents, partitions)
    }
    // Centroids trained for a quarter of the vectors (or none, after `clear`) partition them too coarsely.
    if (dimensions > 0 && documents.live > 0 && (partitions === null || documents.live > 4 * partitions.trainedFor)) partitions = VectorPartitions.trained(documents)
  }

  async function load() {
    const started = performance.now()
    // The scan brings this state or a newer one of each entity: what was written since is applied
    // again (the writes through this index while it loads) or taken in by `follow`.
    held = await behind.state()
    let passagesScanned = false
    for await (const batch of behind.scan!({ passagesUpTo: passagesHeldUpTo })) {
      if (batch.total !== undefined) {
        if (batch.total > wideFieldsHeldUpTo) documents.letWideFieldsGo()
        documents.reserve(batch.total)
      }
      for (const entity of batch.entities) documents.put(entity)
      for (const id of batch.withPassages) withPassages.add(id)
      for (const { id, passages } of batch.passages ?? []) heldPassages?.put(id, passages)
      passagesScanned ||= batch.passages !== undefined
    }
    if (withPassages.size > 0 && !passagesScanned) heldPassages = null
    if (documents.live > wideFieldsHeldUpTo) documents.letWideFieldsGo()
    documents.loaded()
    const partitioned = performance.now()
    // An empty index has nothing to train on: the first write trains its partitions.
    if (dimensions > 0 && documents.live > 0) partitions = VectorPartitions.trained(documents)
    const partitioning = Math.round(performance.now() - partitioned)
    for (const change of pending) applyHere(change)
    pending = []
    status = 'ready'
    onLoaded?.({ entities: documents.live, milliseconds: Math.round(performance.now() - started), partitioning })
  }
  /** Loads the documents (again: what was held is let go first); search goes to the index behind meanwhile. */
  function startLoading(): Promise<void> {
    status = 'loading'
    documents = Documents.forLoad(dimensions)
    partitions = null
    withPassages.clear()
    heldPassages = new HeldPassages()
    prefilters.clear()
    return (behind.scan ? load() : Promise.reject(new Error('the index behind cannot be scanned'))).catch(() => {
      // Search stays with the index behind, as it was while loading; nothing more is kept here.
      status = 'failed'
      failedAt = Date.now()
      pending = []
      documents = new Documents(dimensions)
      partitions = null
      heldPassages = null
    })
  }
  let loading = startLoading()
  const ready = () => status === 'ready'
  /** Writes through this index and what `follow` takes in, one at a time: each replaces what the other read. */
  let writing: Promise<unknown> = Promise.resolve()
  const serialized = <T>(work: () => Promise<T>): Promise<T> => {
    const result = writing.then(work)
    writing = result.catch(() => undefined)
    return result
  }
  /**
   * The index behind's state as last read or written here (it has no other writer): every search
   * asks it (its lag), and a read of LanceDB's state cost 1.5 to 3 ms of CPU. Read again after a
   * write that failed or a clear.
   */
  let knownState: Promise<IndexState> | null = null

  return {
    state() {
      // Others' writes change it: read each time (from PostgreSQL, a row; LanceDB's has one writer).
      if (othersWrite) return behind.state()
      if (knownState === null) {
        const reading = behind.state()
        knownState = reading
        reading.catch(() => {
          if (knownState === reading) knownState = null
        })
      }
      return knownState
    },
    apply: (change) =>
      serialized(async () => {
        try {
          await behind.apply(change)
        } catch (error) {
          knownState = null
          throw error
        }
        knownState = Promise.resolve(change.state)
        if (status === 'loading') pending.push(change)
        else if (status === 'ready') applyHere(change)
      }),
    follow: (changed) =>
      serialized(async () => {
        if (status === 'failed' && Date.now() - failedAt >= RELOAD_AFTER_FAILURE_MS) loading = startLoading()
        if (status !== 'ready') return 0
        const target = await behind.state()
        if (target.cursor === held.cursor) return 0
        // Emptied, and built again from the feed's start since (another embedder, a `reindex`).
        if (target.cursor === null || (held.cursor !== null && target.cursor < held.cursor)) {
          loading = startLoading()
          return 0
        }
        const ids = await changed(held.cursor, target.cursor)
        const entities = await behind.entitiesOf!(ids)
        const found = new Set(entities.map((entity) => entity.id))
        // Loaded again meanwhile (a `clear`): what was read is older than what that load brings.
        if (status !== 'ready') return 0
        applyHere({ upserts: entities, removals: ids.filter((id) => !found.has(id)), state: target })
        return entities.length
      }),
    heldState: () => (ready() ? held : null),
    // Until loaded, search goes to the index behind.
    get ranksInProcess() {
      return ready()
    },
    async fullText(query, qualifiers, limit) {
      // Passages are ranked here while few enough to be held, else by the index behind; merged as it merges them.
      const passagesHere = withPassages.size === 0 || heldPassages !== null || behind.passageText !== undefined
      if (!ready() || !passagesHere || query.words.length > MOST_RANKED_WORDS || !documents.keepsFieldsOf(qualifiers)) return behind.fullText(query, qualifiers, limit)
      const prefilter = prefilterFor(qualifiers)
      const byEntity = rankText(documents, query, prefilter, limit)
      if (withPassages.size === 0) return byEntity
      const byPassage =
        heldPassages === null
          ? await behind.passageText!(query, qualifiers, limit)
          : heldPassages.rank(query, (id) => {
              const slot = documents.slotOf(id)
              return slot !== undefined && (prefilter === null || prefilter.allows(slot))
            })
      return withPassageText(byEntity, byPassage, limit, query.words.length)
    },
    async nearest(vector, qualifiers, limit) {
      if (!ready() || partitions === null || !documents.keepsFieldsOf(qualifiers)) return behind.nearest(vector, qualifiers, limit)
      const prefilter = prefilterFor(qualifiers)
      const allowed = prefilter && allowedSlots(documents, prefilter, exactVectorsUpTo)
      return allowed ? partitions.nearestAmong(vector, allowed, limit) : partitions.nearest(vector, prefilter, limit, exactVectorsUpTo)
    },
    clear: () =>
      serialized(async () => {
        // After the load, which would otherwise put back what the index behind held.
        await loading
        await behind.clear().finally(() => (knownState = null))
        documents = new Documents(dimensions)
        prefilters.clear()
        // Trained again on what the next writes bring.
        partitions = null
        withPassages.clear()
        heldPassages = new HeldPassages()
        held = { cursor: null, embedderId: held.embedderId }
      }),
    optimize: () => behind.optimize(),
    async close() {
      await loading
      await behind.close()
    },
  }
}

/** The live documents made again in fresh columns: what dead slots held is let go. */
function compacted(documents: Documents): Documents {
  const fresh = Documents.forLoad(documents.dimensions, documents.holdsWideFields)
  fresh.reserve(documents.live)
  for (let slot = 0; slot < documents.ids.length; slot++) if (documents.alive.values[slot] === 1) fresh.put(documents.entityAt(slot))
  fresh.loaded()
  return fresh
}
