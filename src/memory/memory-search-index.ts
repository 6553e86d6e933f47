import type { PublicSnapshot } from '../contract/entity.js'
import { matchesQualifiers } from '../gffs/evaluate.js'
import type { IndexedEntity, IndexState, QueryWord, SearchIndex, TextHit, TextQuery } from '../ports/search-index.js'
import { withPassageText } from '../search/passage-ranks.js'
import { containsPhrase, editDistance, MATCH_WEIGHTS, matchesWord, trigramsOf, typoAllowance } from '../search/text.js'

/** BM25's usual constants (Lucene's, Elasticsearch's). */
const K1 = 1.2
const B = 0.75

/** One field's terms of every entity, and BM25 over them. */
class Field {
  private readonly frequency = new Map<string, number>()
  private readonly averageLength: number
  constructor(
    private readonly count: number,
    termsOf: Iterable<readonly string[]>,
  ) {
    let length = 0
    for (const terms of termsOf) {
      length += terms.length
      for (const term of new Set(terms)) this.frequency.set(term, (this.frequency.get(term) ?? 0) + 1)
    }
    this.averageLength = length / Math.max(1, count)
  }
  /** Document frequency of a term, or of a phrase counted by `holders`. */
  idf(holders: number): number {
    return Math.log(1 + (this.count - holders + 0.5) / (holders + 0.5))
  }
  termIdf(term: string): number {
    return this.idf(this.frequency.get(term) ?? 0)
  }
  score(occurrences: number, length: number, idf: number): number {
    if (occurrences === 0) return 0
    return (idf * occurrences * (K1 + 1)) / (occurrences + K1 * (1 - B + (B * length) / this.averageLength))
  }
}

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
      for (const entity of upserts) {
        const passages = entity.passages?.map((passage) => ({ tokens: [...passage.tokens] }))
        entities.set(entity.id, { ...entity, tokens: [...entity.tokens], names: [...entity.names], vector: entity.vector.slice(), ...(passages ? { passages } : {}) })
      }
      state = { ...next }
    },
    async fullText(query, qualifiers, limit) {
      const all = [...entities.values()]
      const inScope = candidates(qualifiers)
      const byEntity = rankText(all, inScope, query, true)
      if (!all.some((entity) => entity.passages?.length)) return byEntity.slice(0, limit)
      return withPassageText(byEntity, rankText(all.flatMap(passageDocuments), inScope.flatMap(passageDocuments), query, false), limit)
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

/** What full text ranks: an entity, or a passage of one (under the entity's id, with no names). */
interface TextDocument {
  id: string
  tokens: readonly string[]
  names: readonly string[]
}

const passageDocuments = (entity: IndexedEntity): TextDocument[] => (entity.passages ?? []).map((passage) => ({ id: entity.id, tokens: passage.tokens, names: [] }))

/**
 * BM25 of `candidates` (with statistics over `all`, as a full-text engine keeps them), best first.
 * Words match within their typo allowance only where `nearWords` (entities, not passages: see `IndexedPassage`).
 */
function rankText(all: readonly TextDocument[], candidates: readonly TextDocument[], { words, phrases }: TextQuery, nearWords: boolean): TextHit[] {
  const trigramsOfDocument = new Map(all.map((document) => [document, trigramsOf(document.names.join(' '))]))
  const tokens = new Field(all.length, all.map((document) => document.tokens))
  const nameField = new Field(all.length, all.map((document) => document.names))
  const trigramField = new Field(all.length, trigramsOfDocument.values())
  const phraseIdf = phrases.map((phrase) => tokens.idf(all.filter((document) => containsPhrase(document.tokens, phrase)).length))
  const hits: TextHit[] = []
  for (const document of candidates) {
    if (!phrases.every((phrase) => containsPhrase(document.tokens, phrase))) continue
    const trigrams = trigramsOfDocument.get(document) ?? trigramsOf(document.names.join(' '))
    const trigramSet = new Set(trigrams)
    const tokenScore = (token: string) => tokens.score(countOf(document.tokens, [token]), document.tokens.length, tokens.termIdf(token))
    let score = phrases.reduce((sum, phrase, index) => sum + tokens.score(countOf(document.tokens, phrase), document.tokens.length, phraseIdf[index]!), 0)
    for (const { token, names } of words) {
      score += MATCH_WEIGHTS.word * tokenScore(token)
      // The fuzzy clause matches the word itself too: an exact match scores both.
      const allowance = nearWords ? typoAllowance(token) : 0
      const near = allowance === 0 ? [] : [...new Set(document.tokens)].filter((other) => editDistance(token, other, allowance) <= allowance)
      score += MATCH_WEIGHTS.nearWord * Math.max(0, ...near.map(tokenScore))
      for (const name of names) {
        score += MATCH_WEIGHTS.name * nameField.score(countOf(document.names, [name]), document.names.length, nameField.termIdf(name))
        const grams = name.length >= 3 ? trigramsOf(name) : []
        if (grams.length === 0 || !grams.every((gram) => trigramSet.has(gram))) continue
        for (const gram of new Set(grams)) score += MATCH_WEIGHTS.nameTrigram * trigramField.score(countOf(trigrams, [gram]), trigrams.length, trigramField.termIdf(gram))
      }
    }
    if (score === 0 && phrases.length === 0) continue
    const matches = nearWords ? (word: QueryWord) => matchesWord(word, document.tokens, document.names, trigramSet) : (word: QueryWord) => document.tokens.includes(word.token)
    hits.push({ id: document.id, score, matched: words.filter(matches).length })
  }
  return hits.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
}

/** How often `term` (a word, or a phrase's tokens in a row) occurs in `tokens`. */
function countOf(tokens: readonly string[], term: readonly string[]): number {
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
