import type { PublicSnapshot } from '../contract/entity.js'
import { matchesQualifiers } from '../gffs/evaluate.js'
import type { IndexedEntity, IndexState, SearchIndex, TextHit, TextQuery } from '../ports/search-index.js'
import { bestFirst, fieldStatistics, textScorer, type ScoredText, type TextStatistics } from '../search/bm25.js'
import { withPassageText } from '../search/passage-ranks.js'
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
    ranksInProcess: true,
    state: async () => ({ ...state }),
    async apply({ upserts, removals, state: next }) {
      for (const id of removals) entities.delete(id)
      for (const entity of upserts) {
        const passages = entity.passages?.map((passage) => ({ tokens: [...passage.tokens] }))
        entities.set(entity.id, { ...entity, tokens: [...entity.tokens], names: [...entity.names], vector: entity.vector.slice(), ...(passages ? { passages } : {}) })
      }
      state = { ...next }
    },
    async fullText(query, qualifiers, limit) {
      const all = [...entities.values()]
      const inScope = candidates(qualifiers)
      const byEntity = rankText(all, inScope, query, false)
      if (!all.some((entity) => entity.passages?.length)) return byEntity.slice(0, limit)
      return withPassageText(byEntity, rankText(all.flatMap(passageTexts), inScope.flatMap(passageTexts), query, true), limit, query.words.length)
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

/** A passage as full text ranks it: under its entity's id, with no names. */
const passageTexts = (entity: IndexedEntity): ScoredText[] => (entity.passages ?? []).map((passage) => ({ id: entity.id, tokens: passage.tokens, names: [] }))

/**
 * BM25 of `candidates`, with statistics over `all` as a full-text engine keeps them, best first;
 * words matched exactly only where `exactWords` (passages: see `IndexedPassage`).
 */
function rankText(all: readonly ScoredText[], candidates: readonly ScoredText[], query: TextQuery, exactWords: boolean): TextHit[] {
  const statistics: TextStatistics = {
    tokens: fieldStatistics(all.map((text) => text.tokens)),
    names: fieldStatistics(all.map((text) => text.names)),
    trigrams: fieldStatistics(all.map((text) => trigramsOf(text.names.join(' ')))),
    phraseHolders: query.phrases.map((phrase) => all.filter((text) => containsPhrase(text.tokens, phrase)).length),
  }
  const score = textScorer(query, statistics, { exactWords })
  return candidates.flatMap((text) => score(text) ?? []).sort(bestFirst)
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0
  for (let index = 0; index < a.length; index++) sum += a[index]! * b[index]!
  return sum
}
