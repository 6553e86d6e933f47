import type { StoredEntity } from '../contract/entity.js'
import { matchesQualifiers } from '../gffs/evaluate.js'
import type { GffsQuery } from '../gffs/types.js'
import type { Embedder } from '../ports/embedder.js'
import type { EntityStore, ListedEntity } from '../ports/entity-store.js'
import type { SearchIndex } from '../ports/search-index.js'
import { containsPhrase, fullTextOf, tokenize } from './text.js'

/** Results a search answers at most (spec 8). */
export const SEARCH_LIMIT = 100
/** Reciprocal-rank fusion's k (Cormack et al.; Elasticsearch's and LanceDB's default). */
const RRF_K = 60

export interface Search {
  /** The entities for a parsed `q`, best first: at most 100, canonical, current. */
  search(query: GffsQuery): Promise<ListedEntity[]>
  /** How many changes of the feed the index has not applied yet (0 when current). */
  lag(): Promise<number>
}

export interface SearchOptions {
  index: SearchIndex
  embedder: Embedder
  /** How many changes of the store's feed the index has not applied (`indexer.lag`); default 0. */
  lag?: () => Promise<number>
}

/**
 * Hybrid search. Qualifiers prefilter both rankings; positive words and phrases rank by BM25 and by
 * vector similarity, fused by reciprocal rank (score = sum of 1 / (60 + rank)); excluded words and
 * phrases remove every entity whose indexed text holds them, from the fused list. Qualifiers alone
 * list up to 100 matching entities in id order, from the store itself.
 */
export function createSearch(store: EntityStore, options: SearchOptions): Search {
  const { index, embedder } = options
  return {
    lag: options.lag ?? (async () => 0),
    async search(query) {
      const positive = query.text.filter((term) => !term.negated)
      const excluded = query.text.filter((term) => term.negated).map((term) => tokenize(term.text)).filter((tokens) => tokens.length > 0)
      if (positive.length === 0) return withoutExcluded(store, await listInIdOrder(store, query), excluded)
      const terms = positive.map((term) => tokenize(term.text)).filter((tokens) => tokens.length > 0)
      const [vector] = await embedder.embed([positive.map((term) => term.text).join(' ')])
      const depth = SEARCH_LIMIT + 50 * excluded.length
      const [byText, byMeaning] = await Promise.all([
        terms.length > 0 ? index.fullText(terms, query.qualifiers, depth) : Promise.resolve([]),
        vector!.some((value) => value !== 0) ? index.nearest(vector!, query.qualifiers, depth) : Promise.resolve([]),
      ])
      const ranked: StoredEntity[] = []
      for (const id of fuse([byText, byMeaning])) {
        const entity = await store.getEntity(id)
        // The store is the truth: an entity the index has not caught up with yet is checked here.
        if (entity?.state !== 'canonical' || !matchesQualifiers(query.qualifiers, entity.snapshot) || holdsAny(entity, excluded)) continue
        ranked.push(entity)
        if (ranked.length === SEARCH_LIMIT) break
      }
      return ranked
    },
  }
}

/** Reciprocal-rank fusion of rankings (best first); ties keep the first ranking's order. */
export function fuse(rankings: string[][]): string[] {
  const scores = new Map<string, number>()
  for (const ranking of rankings) {
    ranking.forEach((id, rank) => scores.set(id, (scores.get(id) ?? 0) + 1 / (RRF_K + rank + 1)))
  }
  return [...scores.entries()].sort((a, b) => b[1] - a[1]).map(([id]) => id)
}

function holdsAny(entity: StoredEntity, excluded: string[][]): boolean {
  if (excluded.length === 0) return false
  const tokens = tokenize(fullTextOf(entity.snapshot))
  return excluded.some((term) => (term.length === 1 ? tokens.includes(term[0]!) : containsPhrase(tokens, term)))
}

/** The entities whose indexed text holds no excluded word or phrase; a rendered entity is read whole for it. */
async function withoutExcluded(store: EntityStore, listed: ListedEntity[], excluded: string[][]): Promise<ListedEntity[]> {
  if (excluded.length === 0) return listed
  const entities = await Promise.all(listed.map((entity) => ('snapshot' in entity ? entity : store.getEntity(entity.id))))
  return entities.filter((entity): entity is StoredEntity => entity?.state === 'canonical' && !holdsAny(entity, excluded))
}

/** Up to 100 matching entities in id order, following the store's pages (which may be short). */
async function listInIdOrder(store: EntityStore, query: GffsQuery): Promise<ListedEntity[]> {
  const entities: ListedEntity[] = []
  let after: string | null = null
  for (let pages = 0; pages < 20 && entities.length < SEARCH_LIMIT; pages++) {
    const page = await store.listEntities({ qualifiers: query.qualifiers, after, limit: SEARCH_LIMIT - entities.length })
    entities.push(...page.entities)
    if (!page.hasMore) break
    after = page.cursor !== undefined ? page.cursor : (page.entities.at(-1)?.id ?? after)
  }
  return entities
}
