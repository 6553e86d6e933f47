import type { QueryWord, TextHit, TextQuery } from '../ports/search-index.js'
import { containsPhrase, editDistance, MATCH_WEIGHTS, matchesWord, trigramsOf, typoAllowance } from './text.js'

/** BM25's usual constants (Lucene's, Elasticsearch's): term frequency saturation and length normalization. */
export const BM25 = { k1: 1.2, b: 0.75 } as const
const { k1: K1, b: B } = BM25

/** What BM25 needs to know of one field over the whole index. */
export interface FieldStatistics {
  /** Entities indexed. */
  count: number
  /** Mean number of terms an entity holds in the field. */
  averageLength: number
  /** Entities whose field holds `term`. */
  holders(term: string): number
}

/** The statistics of the three fields full text ranks by, and how many entities hold each phrase of the query. */
export interface TextStatistics {
  tokens: FieldStatistics
  names: FieldStatistics
  trigrams: FieldStatistics
  phraseHolders: readonly number[]
}

/** One entity's indexed text, as full text scores it. */
export interface ScoredText {
  id: string
  tokens: readonly string[]
  names: readonly string[]
}

/** The statistics of a field held in memory, from every entity's terms. */
export function fieldStatistics(termsOf: Iterable<readonly string[]>): FieldStatistics {
  const frequency = new Map<string, number>()
  let count = 0
  let length = 0
  for (const terms of termsOf) {
    count++
    length += terms.length
    for (const term of new Set(terms)) frequency.set(term, (frequency.get(term) ?? 0) + 1)
  }
  return { count, averageLength: length / Math.max(1, count), holders: (term) => frequency.get(term) ?? 0 }
}

/** Inverse document frequency of a term that `holders` entities hold. */
export function idf(field: FieldStatistics, holders: number): number {
  return Math.log(1 + (field.count - holders + 0.5) / (holders + 0.5))
}

function bm25(field: FieldStatistics, occurrences: number, length: number, weight: number): number {
  if (occurrences === 0) return 0
  return (weight * occurrences * (K1 + 1)) / (occurrences + K1 * (1 - B + (B * length) / field.averageLength))
}

/**
 * An entity's full-text hit for `query` (`TextQuery`), or null when it holds no word and not every
 * phrase: BM25 of each kind of match, weighed by `MATCH_WEIGHTS`. Every index ranks by this, with
 * its own statistics. With `exactWords` (a passage), a word matches only as itself, never a near one.
 */
export function textHitOf({ words, phrases }: TextQuery, entity: ScoredText, statistics: TextStatistics, { exactWords = false } = {}): TextHit | null {
  if (!phrases.every((phrase) => containsPhrase(entity.tokens, phrase))) return null
  const { tokens, names: nameField, trigrams: trigramField } = statistics
  const trigrams = trigramsOf(entity.names.join(' '))
  const trigramSet = new Set(trigrams)
  const termScore = (field: FieldStatistics, terms: readonly string[], term: readonly string[]) =>
    bm25(field, countOf(terms, term), terms.length, idf(field, field.holders(term.join(' '))))
  const tokenScore = (token: string) => termScore(tokens, entity.tokens, [token])
  let score = phrases.reduce((sum, phrase, index) => sum + bm25(tokens, countOf(entity.tokens, phrase), entity.tokens.length, idf(tokens, statistics.phraseHolders[index]!)), 0)
  for (const { token, names } of words) {
    score += MATCH_WEIGHTS.word * tokenScore(token)
    // The fuzzy clause matches the word itself too: an exact match scores both.
    if (!exactWords) score += MATCH_WEIGHTS.nearWord * Math.max(0, ...nearTokens(token, entity.tokens).map(tokenScore))
    for (const name of names) {
      score += MATCH_WEIGHTS.name * termScore(nameField, entity.names, [name])
      const grams = name.length >= 3 ? trigramsOf(name) : []
      if (grams.length === 0 || !grams.every((gram) => trigramSet.has(gram))) continue
      for (const gram of new Set(grams)) score += MATCH_WEIGHTS.nameTrigram * termScore(trigramField, trigrams, [gram])
    }
  }
  if (score === 0 && phrases.length === 0) return null
  const matches = exactWords ? (word: QueryWord) => entity.tokens.includes(word.token) : (word: QueryWord) => matchesWord(word, entity.tokens, entity.names, trigramSet)
  return { id: entity.id, score, matched: words.filter(matches).length }
}

/** The tokens within the typo allowance of a typed token, itself included (none when it has no allowance). */
export function nearTokens(token: string, tokens: readonly string[]): string[] {
  const allowance = typoAllowance(token)
  return allowance === 0 ? [] : [...new Set(tokens)].filter((other) => editDistance(token, other, allowance) <= allowance)
}

/** Best first; ties in id order. */
export function bestFirst(a: TextHit, b: TextHit): number {
  return b.score - a.score || (a.id < b.id ? -1 : 1)
}

/** How often `term` (a word, or a phrase's tokens in a row) occurs in `tokens`. */
function countOf(tokens: readonly string[], term: readonly string[]): number {
  let count = 0
  for (let start = 0; start + term.length <= tokens.length; start++) {
    if (term.every((token, offset) => tokens[start + offset] === token)) count++
  }
  return count
}
