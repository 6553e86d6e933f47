import type { IndexedPassage, TextHit, TextQuery } from '../ports/search-index.js'
import { bestFirst, type FieldStatistics, textScorer } from '../search/bm25.js'
import { containsPhrase } from '../search/text.js'

/** Statistics of a field no passage has (names, trigrams): every passage holds none of it. */
const NO_FIELD = (count: number): FieldStatistics => ({ count, averageLength: 0, holders: () => 0 })

/**
 * The passages of the entities' texts, held in memory while they are few (the demo's 19 bills make
 * 264), ranked as the memory index ranks them (`textScorer` with exact words, statistics over every
 * passage): asking the index on disk for them cost 5 to 6 ms a search over the demo data, most of
 * a search. Each term's postings (passage, count) are kept, so that a query scores the passages
 * that hold a typed word, or a phrase's every token, and counts nothing.
 */
export class HeldPassages {
  /** By passage number: its tokens and its entity (undefined: a number free for the next passage). */
  private readonly tokensOf: (readonly string[] | undefined)[] = []
  private readonly entityOf: string[] = []
  private readonly freeNumbers: number[] = []
  private readonly byEntity = new Map<string, number[]>()
  /** By term: how often each passage holding it holds it. */
  private readonly postings = new Map<string, Map<number, number>>()
  private passages = 0
  private tokens = 0

  /** How many passages are held. */
  get count(): number {
    return this.passages
  }

  /** An entity's passages in place of those it had (none: it has none). */
  put(id: string, passages: readonly IndexedPassage[]): void {
    this.remove(id)
    if (passages.length === 0) return
    this.byEntity.set(
      id,
      passages.map(({ tokens }) => {
        const number = this.freeNumbers.pop() ?? this.tokensOf.length
        this.tokensOf[number] = [...tokens]
        this.entityOf[number] = id
        this.passages++
        this.tokens += tokens.length
        for (const token of tokens) {
          let holding = this.postings.get(token)
          if (holding === undefined) this.postings.set(token, (holding = new Map()))
          holding.set(number, (holding.get(number) ?? 0) + 1)
        }
        return number
      }),
    )
  }

  remove(id: string): void {
    const numbers = this.byEntity.get(id)
    if (numbers === undefined) return
    this.byEntity.delete(id)
    for (const number of numbers) {
      const tokens = this.tokensOf[number]!
      this.passages--
      this.tokens -= tokens.length
      for (const token of new Set(tokens)) {
        const holding = this.postings.get(token)!
        holding.delete(number)
        if (holding.size === 0) this.postings.delete(token)
      }
      this.tokensOf[number] = undefined
      this.freeNumbers.push(number)
    }
  }

  /**
   * Full text over the passages of the entities `allows` keeps: a hit for each passage holding a
   * typed word (and every phrase), under its entity's id, best first (`SearchIndex.passageText`).
   */
  rank(query: TextQuery, allows: (id: string) => boolean): TextHit[] {
    const tokens: FieldStatistics = { count: this.passages, averageLength: this.tokens / Math.max(1, this.passages), holders: (term) => this.postings.get(term)?.size ?? 0 }
    // Each phrase's passages: those holding every one of its tokens, and of them those holding it (its document frequency).
    const holdingPhraseTokens = query.phrases.map((phrase) => this.holdingEvery(phrase))
    const phraseHolders = holdingPhraseTokens.map((numbers, at) => numbers.filter((number) => containsPhrase(this.tokensOf[number]!, query.phrases[at]!)).length)
    const score = textScorer(query, { tokens, names: NO_FIELD(this.passages), trigrams: NO_FIELD(this.passages), phraseHolders }, { exactWords: true })
    const typed = [...new Set(query.words.map((word) => word.token))]
    // A passage holding a typed word, or every token of a phrase (it may hold every phrase and no word).
    const candidates = new Set<number>()
    for (const token of typed) for (const number of this.postings.get(token)?.keys() ?? []) candidates.add(number)
    for (const number of holdingPhraseTokens.flat()) candidates.add(number)
    const allowed = new Map<string, boolean>()
    const hits: TextHit[] = []
    for (const number of candidates) {
      const id = this.entityOf[number]!
      let allowing = allowed.get(id)
      if (allowing === undefined) allowed.set(id, (allowing = allows(id)))
      if (!allowing) continue
      const occurrences = new Map<string, number>()
      for (const token of typed) {
        const count = this.postings.get(token)?.get(number)
        if (count !== undefined) occurrences.set(token, count)
      }
      const hit = score({ id, tokens: this.tokensOf[number]!, names: [], occurrences })
      if (hit !== null) hits.push(hit)
    }
    return hits.sort(bestFirst)
  }

  /** The passages holding every token of `terms`. */
  private holdingEvery(terms: readonly string[]): number[] {
    const [first, ...rest] = terms.map((term) => this.postings.get(term) ?? new Map<number, number>())
    return [...(first?.keys() ?? [])].filter((number) => rest.every((holding) => holding.has(number)))
  }
}
