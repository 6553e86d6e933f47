import type { PublicSnapshot } from '../contract/entity.js'
import { matchesQualifiers } from '../gffs/evaluate.js'
import type { IndexedEntity, IndexState, SearchIndex } from '../ports/search-index.js'
import { containsPhrase } from '../search/text.js'

/** BM25's usual constants (Lucene's, Elasticsearch's). */
const K1 = 1.2
const B = 0.75

/**
 * The search index in memory, exact on both sides: BM25 over every matching document, cosine over
 * every vector. The reference that the LanceDB index is tested against; for tests and small data.
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
      for (const entity of upserts) entities.set(entity.id, { ...entity, tokens: [...entity.tokens], vector: entity.vector.slice() })
      state = { ...next }
    },
    async fullText(terms, qualifiers, limit) {
      const all = [...entities.values()]
      const averageLength = all.reduce((sum, entity) => sum + entity.tokens.length, 0) / Math.max(1, all.length)
      // Document frequencies over the whole index, as a full-text engine keeps them.
      const frequency = (term: string[]) => all.filter((entity) => matchesTerm(entity.tokens, term)).length
      const idf = terms.map((term) => {
        const n = frequency(term)
        return Math.log(1 + (all.length - n + 0.5) / (n + 0.5))
      })
      const scored = candidates(qualifiers)
        .filter((entity) => terms.every((term) => matchesTerm(entity.tokens, term)))
        .map((entity) => {
          const score = terms.reduce((sum, term, index) => {
            const occurrences = countTerm(entity.tokens, term)
            const norm = K1 * (1 - B + (B * entity.tokens.length) / averageLength)
            return sum + (idf[index]! * occurrences * (K1 + 1)) / (occurrences + norm)
          }, 0)
          return { id: entity.id, score }
        })
      return scored.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1)).slice(0, limit).map((hit) => hit.id)
    },
    async nearest(vector, qualifiers, limit) {
      return candidates(qualifiers)
        .map((entity) => ({ id: entity.id, score: dot(entity.vector, vector) }))
        .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
        .slice(0, limit)
        .map((hit) => hit.id)
    },
    clear: async () => {
      entities.clear()
      state = { cursor: null, embedderId: null }
    },
    optimize: async () => {},
    close: async () => {},
  }
}

function matchesTerm(tokens: readonly string[], term: readonly string[]): boolean {
  return term.length === 1 ? tokens.includes(term[0]!) : containsPhrase(tokens, term)
}

function countTerm(tokens: readonly string[], term: readonly string[]): number {
  let count = 0
  for (let start = 0; start + term.length <= tokens.length; start++) {
    if (term.every((token, offset) => tokens[start + offset] === token)) count++
  }
  return count
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0
  for (let index = 0; index < a.length; index++) sum += a[index]! * b[index]!
  return sum
}
