import type { PublicSnapshot } from '../contract/entity.js'
import { matchesQualifiers } from '../gffs/evaluate.js'
import type { IndexedEntity, IndexState, SearchIndex } from '../ports/search-index.js'
import { bestFirst, fieldStatistics, textHitOf, type TextStatistics } from '../search/bm25.js'
import { containsPhrase, trigramsOf } from '../search/text.js'

/**
 * The search index in memory, exact on both sides: BM25 over every document, cosine over every
 * vector. The reference that the LanceDB index is tested against; for tests and small data.
 */
export function createMemorySearchIndex(): SearchIndex {
  const entities = new Map<string, IndexedEntity>()
  let state: IndexState = { cursor: null, embedderId: null }

  const candidates = (qualifiers: Parameters<SearchIndex['fullText']>[1]) =>
    [...entities.values()].filter((entity) => matchesQualifiers(qualifiers, { ...entity.fields, texts: [] } as PublicSnapshot))

  return {
    state: async () => ({ ...state }),
    async apply({ upserts, removals, state: next }) {
      for (const id of removals) entities.delete(id)
      for (const entity of upserts) entities.set(entity.id, { ...entity, tokens: [...entity.tokens], names: [...entity.names], vector: entity.vector.slice() })
      state = { ...next }
    },
    async fullText(query, qualifiers, limit) {
      // Statistics over the whole index, as a full-text engine keeps them.
      const all = [...entities.values()]
      const statistics: TextStatistics = {
        tokens: fieldStatistics(all.map((entity) => entity.tokens)),
        names: fieldStatistics(all.map((entity) => entity.names)),
        trigrams: fieldStatistics(all.map((entity) => trigramsOf(entity.names.join(' ')))),
        phraseHolders: query.phrases.map((phrase) => all.filter((entity) => containsPhrase(entity.tokens, phrase)).length),
      }
      const hits = candidates(qualifiers).flatMap((entity) => textHitOf(query, entity, statistics) ?? [])
      return hits.sort(bestFirst).slice(0, limit)
    },
    async nearest(vector, qualifiers, limit) {
      return candidates(qualifiers)
        .map((entity) => ({ id: entity.id, score: dot(entity.vector, vector) }))
        .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
        .slice(0, limit)
    },
    clear: async () => {
      entities.clear()
      state = { cursor: null, embedderId: null }
    },
    optimize: async () => {},
    close: async () => {},
  }
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0
  for (let index = 0; index < a.length; index++) sum += a[index]! * b[index]!
  return sum
}
