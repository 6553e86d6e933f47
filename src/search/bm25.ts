import type { NearForm, ScoredHit, TextHit, TextQuery } from '../ports/search-index.js'
import { containsPhrase, isNear, MATCH_WEIGHTS, trigramsOf } from './text.js'

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
  /** How often each token occurs, where the caller keeps it: with `exactWords`, the typed words' counts are enough (the scorer reads no others); else every token's. */
  occurrences?: ReadonlyMap<string, number>
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

/** BM25 of a term that occurs `occurrences` times in a field of `length` terms, `weight` its IDF. */
export function bm25(field: FieldStatistics, occurrences: number, length: number, weight: number): number {
  if (occurrences === 0) return 0
  return (weight * occurrences * (K1 + 1)) / (occurrences + K1 * (1 - B + (B * length) / field.averageLength))
}

/**
 * Scores entities' full text for `query` (`TextQuery`): each entity's hit, or null when it holds no
 * word and not every phrase: BM25 of each kind of match, weighed by `MATCH_WEIGHTS`. Every index
 * ranks by this, with its own statistics. With `exactWords` (passages), a word matches only as
 * itself, never a near one. One scorer serves a query's candidates: what depends on the query alone
 * (edit distances to the tokens met, IDFs, the names' trigrams) is worked out once, not per
 * candidate (two common words under a prefilter at 1,000,000 rows score 500 candidates).
 */
export function textScorer({ words, phrases }: TextQuery, statistics: TextStatistics, { exactWords = false } = {}): (entity: ScoredText) => TextHit | null {
  const { tokens: tokenField, names: nameField, trigrams: trigramField } = statistics
  const idfs = new Map<FieldStatistics, Map<string, number>>()
  const idfOf = (field: FieldStatistics, term: string) => {
    const known = idfs.get(field) ?? idfs.set(field, new Map()).get(field)!
    let value = known.get(term)
    if (value === undefined) known.set(term, (value = idf(field, field.holders(term))))
    return value
  }
  const typed = words.map((word) => {
    const { token, names } = word
    const grams = word.nameParts.map((part) => trigramsOf(part))
    return { token, names, forms: word.near.map(nearTest), nameForms: word.nearNames.map(nearTest), grams, distinctGrams: grams.map((each) => [...new Set(each)]) }
  })
  const anyGrams = typed.some((word) => word.grams.length > 0)

  return (entity) => {
    if (!phrases.every((phrase) => containsPhrase(entity.tokens, phrase))) return null
    const occurrences = entity.occurrences ?? countsOf(entity.tokens)
    const trigrams = anyGrams ? trigramsOf(entity.names.join(' ')) : []
    const trigramSet = new Set(trigrams)
    const tokenScore = (token: string) => bm25(tokenField, occurrences.get(token) ?? 0, entity.tokens.length, idfOf(tokenField, token))
    const termScore = (field: FieldStatistics, terms: readonly string[], term: string) => bm25(field, countOf(terms, [term]), terms.length, idfOf(field, term))
    let score = phrases.reduce((sum, phrase, index) => sum + bm25(tokenField, countOf(entity.tokens, phrase), entity.tokens.length, idf(tokenField, statistics.phraseHolders[index]!)), 0)
    let matched = 0
    for (const word of typed) {
      score += MATCH_WEIGHTS.word * tokenScore(word.token)
      // Each near form's fuzzy clause scores the best near term held, the word itself included: an
      // exact match scores both.
      let holdsNear = occurrences.has(word.token)
      if (!exactWords) {
        const bests = [
          ...word.forms.map((near) => bestNear(near, occurrences.keys(), tokenScore)),
          ...word.nameForms.map((near) => bestNear(near, entity.names, (name) => termScore(nameField, entity.names, name))),
        ]
        for (const best of bests) {
          if (best < 0) continue
          holdsNear = true
          score += MATCH_WEIGHTS.nearWord * best
        }
      }
      let holdsName = false
      for (const name of word.names) {
        score += MATCH_WEIGHTS.name * termScore(nameField, entity.names, name)
        holdsName ||= entity.names.includes(name)
      }
      word.grams.forEach((grams, part) => {
        holdsName ||= grams.every((gram) => trigramSet.has(gram))
        // Every shared trigram scores, as LanceDB's n-gram clause scores them, though only all of them
        // make a match: `Feterman` shares five of six with Fetterman, none with `veterans`.
        for (const gram of word.distinctGrams[part]!) if (trigramSet.has(gram)) score += MATCH_WEIGHTS.nameTrigram * termScore(trigramField, trigrams, gram)
      })
      if (exactWords ? occurrences.has(word.token) : holdsNear || holdsName) matched++
    }
    // Trigrams alone, without a word matched, do not make a hit (LanceDB keeps only the rows that hold a word).
    if (matched === 0 && phrases.length === 0) return null
    return { id: entity.id, score, matched }
  }
}

/** How often each term occurs in `terms`. */
export function countsOf(terms: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1)
  return counts
}

/** Whether a term is within a near form's allowance, each term's answer worked out once. */
function nearTest(form: NearForm): (term: string) => boolean {
  const within = new Map<string, boolean>()
  return (term) => {
    let found = within.get(term)
    if (found === undefined) within.set(term, (found = isNear(form, term)))
    return found
  }
}

/** The best score of the terms `near` accepts, or -1 when it accepts none. */
function bestNear(near: (term: string) => boolean, terms: Iterable<string>, scoreOf: (term: string) => number): number {
  let best = -1
  for (const term of terms) if (near(term)) best = Math.max(best, scoreOf(term))
  return best
}

/** The terms within the allowance of any of a typed word's near `forms` (`QueryWord.near`, `nearNames`), each once. */
export function termsNear(forms: readonly NearForm[], terms: readonly string[]): string[] {
  return forms.length === 0 ? [] : [...new Set(terms)].filter((term) => forms.some((form) => isNear(form, term)))
}

/** Best first; ties in id order. */
export function bestFirst(a: ScoredHit, b: ScoredHit): number {
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
