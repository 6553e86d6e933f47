import type { StoredChange } from '../contract/entity.js'
import { decodeChangeId } from '../contract/change-id.js'
import type { Embedder } from '../ports/embedder.js'
import type { EntityStore } from '../ports/entity-store.js'
import type { IndexedEntity, SearchIndex } from '../ports/search-index.js'
import type { ChangedEntities } from '../resident/resident-search-index.js'
import type { EntityTexts } from '../texts/entity-texts.js'
import { passagesOf } from '../texts/passages.js'
import { EMBEDDED_TEXT_RECIPE, embeddedTextOf, fullTextOf, namesOf, tokenize } from './text.js'

export interface IndexerOptions {
  store: EntityStore
  index: SearchIndex
  embedder: Embedder
  /**
   * The extracted texts of an entity (`createEntityTexts`): given, they are cut into passages that
   * search reads as it reads the entity. Without it, no passages are indexed.
   */
  texts?: EntityTexts
  /** Changes read and applied per step (default 500). */
  batchSize?: number
  /** Compaction policy: optimize after this many changes applied since the last time (default 10,000)... */
  optimizeEvery?: number
  /** ... or once idle this long after a write (default 30 s). */
  optimizeIdleMs?: number
  /** Told after each step: changes applied, and the feed head. */
  onProgress?: (progress: { applied: number; cursor: string | null; head: string | null }) => void
}

export interface Indexer {
  /** Applies every change up to the feed head; returns how many it applied. */
  catchUp(): Promise<number>
  /** Follows the feed in the background, polling every `intervalMs` (default 250 ms). */
  start(intervalMs?: number): void
  stop(): Promise<void>
  /** Changes between the index and the feed head (an estimate from feed positions). */
  lag(): Promise<number>
  /** Seconds since the oldest change the index has not applied was recorded; 0 when it is current. */
  lagSeconds(): Promise<number>
  /**
   * The backlog of building: `lag()` until this indexer has first reached the feed head (a new or
   * rebuilt index), 0 from then on, when a backlog is seconds of staleness that the next steps apply.
   * Readiness reads it; search answers whatever it is.
   */
  buildLag(): Promise<number>
  /** Empties the index and builds it again from the feed (a changed embedder needs it). */
  rebuild(): Promise<number>
}

/** Between the embedder's id and the recipe's version in what an index's state records (`IndexState.embedderId`). */
const RECIPE_MARK = ' text:'

/** What an index's state records of how its vectors were made: the embedder, and the recipe of the text it embedded. */
export function vectorsIdOf(embedder: Embedder): string {
  return `${embedder.id}${RECIPE_MARK}${EMBEDDED_TEXT_RECIPE}`
}

/** The embedder and the embedded text's recipe an index recorded; an index written before recipes were recorded has recipe 1. */
function recordedVectors(recorded: string): { embedder: string; recipe: number } {
  const at = recorded.lastIndexOf(RECIPE_MARK)
  return at === -1 ? { embedder: recorded, recipe: 1 } : { embedder: recorded.slice(0, at), recipe: Number(recorded.slice(at + RECIPE_MARK.length)) }
}

/** The embedder that built an index, when it is not `embedder` (its vectors cannot be compared); else null. */
export function otherEmbedderOf({ embedderId }: { embedderId: string | null }, embedder: Embedder): string | null {
  if (embedderId === null) return null
  const recorded = recordedVectors(embedderId).embedder
  return recorded !== embedder.id ? recorded : null
}

/**
 * Whether an index holds vectors of another recipe of the embedded text than this version's (same
 * embedder): they are comparable but describe entities otherwise, so the indexer rebuilds it. An
 * embedder without vectors embeds nothing: its index never needs it.
 */
export function otherRecipeOf({ embedderId }: { embedderId: string | null }, embedder: Embedder): boolean {
  return embedderId !== null && embedder.dimensions > 0 && recordedVectors(embedderId).recipe !== EMBEDDED_TEXT_RECIPE
}

/**
 * Keeps a search index current from the store's change feed, the only write path: the index
 * records the cursor it has applied, so a restarted indexer goes on from there; one whose index was
 * built by another embedder refuses until `rebuild()`, and one whose index embedded another recipe
 * of the entities' text (an earlier version's) rebuilds it. One indexer per index.
 */
export function createIndexer({ store, index, embedder, texts, batchSize = 500, optimizeEvery = 10_000, optimizeIdleMs = 30_000, onProgress }: IndexerOptions): Indexer {
  let timer: ReturnType<typeof setTimeout> | undefined
  let running: Promise<unknown> = Promise.resolve()
  /** The background loop that may go on: `start` begins a new one, `stop` ends it (an old loop's last step then schedules nothing). */
  let loop = 0
  let sinceOptimize = 0
  let lastWrite = 0
  let reachedHead = false
  const { lag, lagSeconds } = indexLag(index, store)

  /** The cursor to go on from: the index's own, or none once an index of another recipe has been emptied. */
  async function checkEmbedder() {
    const state = await index.state()
    const other = otherEmbedderOf(state, embedder)
    if (other !== null) throw new Error(`the search index was built with the embedder ${other}, not ${embedder.id}: rebuild it (entity-registry reindex)`)
    if (!otherRecipeOf(state, embedder)) return state.cursor
    reachedHead = false
    await index.clear()
    return null
  }

  async function step(cursor: string | null): Promise<{ cursor: string | null; applied: number; more: boolean }> {
    const page = await store.listChanges({ qualifiers: [], after: cursor, limit: batchSize, window: Math.max(batchSize, 10_000) })
    if (page.changes.length === 0 && page.cursor === cursor) return { cursor, applied: 0, more: false }
    // The last change of each entity decides what the index holds of it; the first, whether the index held it before.
    const latest = new Map<string, StoredChange>()
    const created = new Set<string>()
    for (const change of page.changes) {
      if (!latest.has(change.entityId) && change.changeType === 'create') created.add(change.entityId)
      latest.set(change.entityId, change)
    }
    const upserts: StoredChange[] = []
    const removals: string[] = []
    for (const change of latest.values()) {
      if (change.changeType === 'create' || change.changeType === 'update') upserts.push(change)
      else removals.push(change.entityId)
    }
    // An update replaces the entity whole, passages too: the texts' extraction is kept, so reading them again is cheap.
    const passages = await Promise.all(upserts.map(async (change) => (texts && change.snapshot.texts.length > 0 ? passagesOf(await texts(change.snapshot)) : [])))
    const vectors = upserts.length === 0 ? [] : await embedder.embed(upserts.map((change) => embeddedTextOf(change.snapshot)))
    const entities = upserts.map((change, position): IndexedEntity => {
      const { texts: _texts, ...fields } = change.snapshot
      const entity: IndexedEntity = { id: change.entityId, fields, tokens: tokenize(fullTextOf(change.snapshot)), names: namesOf(change.snapshot), vector: vectors[position]! }
      if (created.has(change.entityId)) entity.created = true
      if (passages[position]!.length > 0) entity.passages = passages[position]!.map((passage) => ({ tokens: tokenize(passage) }))
      return entity
    })
    await index.apply({ upserts: entities, removals, state: { cursor: page.cursor, embedderId: vectorsIdOf(embedder) } })
    sinceOptimize += page.changes.length
    lastWrite = Date.now()
    return { cursor: page.cursor, applied: page.changes.length, more: page.hasMore }
  }

  async function catchUp(): Promise<number> {
    let cursor = await checkEmbedder()
    let applied = 0
    for (;;) {
      const result = await step(cursor)
      cursor = result.cursor
      applied += result.applied
      if (onProgress && result.applied > 0) onProgress({ applied, cursor, head: await store.feedHead() })
      if (!result.more) break
    }
    reachedHead = true
    const idle = lastWrite > 0 && Date.now() - lastWrite >= optimizeIdleMs && sinceOptimize > 0
    if (sinceOptimize >= optimizeEvery || idle) {
      await index.optimize()
      sinceOptimize = 0
    }
    return applied
  }

  /** Runs `work` after whatever the indexer is doing: one writer at a time. */
  const serialized = <T>(work: () => Promise<T>): Promise<T> => {
    const result = running.then(work)
    running = result.catch(() => undefined)
    return result
  }

  const indexer: Indexer = {
    catchUp: () => serialized(catchUp),
    start(intervalMs = 250) {
      clearTimeout(timer)
      const current = ++loop
      const tick = () => {
        void indexer
          .catchUp()
          .catch(() => undefined)
          .finally(() => {
            if (loop === current) timer = setTimeout(tick, intervalMs)
          })
      }
      tick()
    },
    async stop() {
      loop++
      clearTimeout(timer)
      await running
    },
    lag,
    lagSeconds,
    buildLag: async () => (reachedHead ? 0 : lag()),
    rebuild: () =>
      serialized(async () => {
        reachedHead = false
        await index.clear()
        return catchUp()
      }),
  }
  return indexer
}

/**
 * How far an index is behind a store's feed (`Indexer.lag` and `lagSeconds`), read through `index`'s
 * state and `store`'s feed: those of the indexer, or a replica's, where search reads them.
 */
export function indexLag(index: Pick<SearchIndex, 'state'>, store: Pick<EntityStore, 'feedHead' | 'listChanges'>): Pick<Indexer, 'lag' | 'lagSeconds'> {
  return {
    async lag() {
      const [{ cursor }, head] = await Promise.all([index.state(), store.feedHead()])
      if (head === null) return 0
      const headSeq = decodeChangeId(head)
      const cursorSeq = cursor === null ? 0 : decodeChangeId(cursor)
      // A store with its own change id form: only "behind or not" can be told.
      if (headSeq === null || cursorSeq === null) return cursor === head ? 0 : 1
      return Math.max(0, headSeq - cursorSeq)
    },
    async lagSeconds() {
      const { cursor } = await index.state()
      const [oldest] = (await store.listChanges({ qualifiers: [], after: cursor, limit: 1, window: 1 })).changes
      return oldest === undefined ? 0 : Math.max(0, (Date.now() - Date.parse(oldest.recordedAt)) / 1000)
    },
  }
}

/**
 * The entities `store`'s feed changed after one cursor, up to another at least
 * (`ResidentSearchIndex.follow`), read a page at a time; change ids sort in feed order.
 */
export function changedEntities(store: Pick<EntityStore, 'listChanges'>, pageSize = 1_000): ChangedEntities {
  return async (after, through) => {
    const ids = new Set<string>()
    for (let cursor = after; ; ) {
      const page = await store.listChanges({ qualifiers: [], after: cursor, limit: pageSize, window: Math.max(pageSize, 10_000) })
      for (const change of page.changes) ids.add(change.entityId)
      if (!page.hasMore || page.cursor === null || page.cursor === cursor || (through !== null && page.cursor >= through)) return [...ids]
      cursor = page.cursor
    }
  }
}
