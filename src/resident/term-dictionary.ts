import { editDistance, trigramsOf } from '../search/text.js'
import { setNewest } from '../bounded-map.js'
import { type Growable, growableUint16, growableUint32, PackedLists } from './growable.js'

/** One term of a field: the documents that hold it (dead ones too, until compaction) and how often. */
export interface Term {
  text: string
  /** Its place in the dictionary's `list`: what forward columns hold. */
  number: number
  /** Document slots, ascending. */
  documents: Growable<Uint32Array>
  /**
   * For each of `documents`, its occurrences (at most 255 counted) and the field's length there (its
   * terms, repeats counted; `LONG_FIELD` for that many or more, then the slot's own column says), as
   * `occurrence(count, length)`: BM25 reads the length beside the count, in a row, where the slot's
   * column is read at random (a cache miss a posting).
   */
  occurrences: Growable<Uint16Array>
  /** Live documents that hold it: BM25's document frequency. */
  holders: number
  /**
   * The most occurrences, and the fewest terms in the field, of the documents listed (dead ones
   * too): BM25 grows with the one and falls with the other, so together they bound the term's score.
   */
  mostCount: number
  leastLength: number
}

/**
 * `leastLength` before any document is listed: longer than any field, and a small integer, which V8
 * keeps in the object itself (`Infinity` was a number object of its own for each of 100,000 terms).
 */
const LONGEST = 0x3fffffff

/** A field length that `Term.occurrences` does not hold: this or longer. */
export const LONG_FIELD = 255

/** A posting's count and its field's length in one number (`Term.occurrences`): the count in the low byte. */
export function occurrence(count: number, length: number): number {
  return Math.min(count, 255) | (Math.min(length, LONG_FIELD) << 8)
}

/** The count an `occurrence` holds. */
export function countOf(occurrence: number): number {
  return occurrence & 0xff
}

/** The field length an `occurrence` holds (`LONG_FIELD`: that or longer). */
export function fieldLengthOf(occurrence: number): number {
  return occurrence >>> 8
}

/** The most words whose near terms a dictionary keeps (`nearAnswers`): some 10,000 terms' references each at most. */
const NEAR_ANSWERS_KEPT = 4096

/** Each slot's term numbers, repeats counted: slot s's are `terms[starts[s] .. starts[s + 1]]`. */
export interface ForwardTerms {
  starts: Uint32Array
  terms: Uint32Array
}

/**
 * The terms of one field (tokens, or names) with their postings, and the terms'
 * own trigrams: a typed word's near terms (typos) are found among the terms, a few thousand
 * trigram entries, never by walking documents.
 */
export class TermDictionary {
  readonly terms = new Map<string, Term>()
  readonly list: Term[] = []
  /**
   * Trigrams of `\u0002term\u0003` to the terms that hold them, by the terms' length (a term within
   * `allowance` edits is within `allowance` of the word's length: only those lengths are walked): the
   * edges count, so that a typo at either end still shares most.
   */
  private readonly termsByGram = new Map<string, Term[][]>()
  /**
   * `near`'s answers by allowance and word, until a term comes to be held or stops being held: the
   * words people search for repeat (given names most: each of a name's forms is looked up), and a
   * lookup walks thousands of trigram entries.
   */
  private readonly nearAnswers = new Map<string, readonly Term[]>()

  /** The term, made on first use. */
  termOf(text: string): Term {
    let term = this.terms.get(text)
    if (term === undefined) {
      term = { text, number: this.list.length, documents: growableUint32(), occurrences: growableUint16(), holders: 0, mostCount: 0, leastLength: LONGEST }
      this.terms.set(text, term)
      this.list.push(term)
      for (const gram of new Set(paddedGramsOf(text))) {
        let byLength = this.termsByGram.get(gram)
        if (byLength === undefined) this.termsByGram.set(gram, (byLength = []))
        for (let length = byLength.length; length <= text.length; length++) byLength.push([])
        byLength[text.length]!.push(term)
      }
    }
    return term
  }

  /** Adds a document's terms (each with its count; `length` terms in all) to the postings; slots come in ascending order. */
  add(slot: number, counts: ReadonlyMap<string, number>, length: number): void {
    for (const [text, count] of counts) {
      const term = this.termOf(text)
      const posted = occurrence(count, length)
      term.documents.push(slot)
      term.occurrences.push(posted)
      if (term.holders++ === 0) this.nearAnswers.clear()
      listed(term, countOf(posted), length)
    }
  }

  /**
   * Makes every term's postings at once (`PackedLists`) from the terms of each slot `alive` marks,
   * for a dictionary whose terms `termOf` made without postings (a load): those `add` would make.
   */
  index(forward: ForwardTerms, alive: Uint8Array, slots: number): void {
    const { starts, terms } = forward
    const occurrences = new Uint32Array(this.list.length)
    const sizes = new Uint32Array(this.list.length)
    for (let slot = 0; slot < slots; slot++) {
      if (alive[slot] !== 1) continue
      for (let at = starts[slot]!; at < starts[slot + 1]!; at++) if (occurrences[terms[at]!]!++ === 0) sizes[terms[at]!]!++
      for (let at = starts[slot]!; at < starts[slot + 1]!; at++) occurrences[terms[at]!] = 0
    }
    const packed = new PackedLists(sizes)
    const documents = new Uint32Array(packed.total)
    const postingOccurrences = new Uint16Array(packed.total)
    for (let slot = 0; slot < slots; slot++) {
      if (alive[slot] !== 1) continue
      for (let at = starts[slot]!; at < starts[slot + 1]!; at++) occurrences[terms[at]!]!++
      for (let at = starts[slot]!; at < starts[slot + 1]!; at++) {
        const number = terms[at]!
        if (occurrences[number] === 0) continue
        const place = packed.next(number)
        documents[place] = slot
        const length = starts[slot + 1]! - starts[slot]!
        postingOccurrences[place] = occurrence(occurrences[number]!, length)
        listed(this.list[number]!, countOf(postingOccurrences[place]!), length)
        occurrences[number] = 0
      }
    }
    this.nearAnswers.clear()
    for (const term of this.list) {
      term.documents = growableUint32(packed.of(documents, term.number))
      term.occurrences = growableUint16(packed.of(postingOccurrences, term.number))
      term.holders = sizes[term.number]!
    }
  }

  /** A document's terms no longer count as held (its postings stay until compaction, skipped as dead). */
  remove(counts: ReadonlyMap<string, number>): void {
    for (const text of counts.keys()) if (--this.terms.get(text)!.holders === 0) this.nearAnswers.clear()
  }

  /**
   * The held terms within `allowance` edits of `word`, itself included. An edit changes at most
   * three of the padded trigrams, so such a term misses at most `3 * allowance` of any of the word's
   * distinct trigrams: of the rarest `3 * allowance + 2`, it holds two at least (or of fewer, one).
   * Only the terms (of a length within `allowance`) holding that many of them are compared, each
   * once: a term met in one list alone is passed over without an edit distance. Answers are kept
   * (`nearAnswers`) until the held terms change.
   */
  near(word: string, allowance: number): readonly Term[] {
    const key = `${allowance} ${word}`
    // The answer kept, or found, is made the newest kept: the least recently asked go first.
    const found = this.nearAnswers.get(key) ?? this.nearAmongTerms(word, allowance)
    setNewest(this.nearAnswers, key, found, NEAR_ANSWERS_KEPT)
    return found
  }

  private nearAmongTerms(word: string, allowance: number): Term[] {
    const lowest = Math.max(0, word.length - allowance)
    const highest = word.length + allowance
    const listsByGram = [...new Set(paddedGramsOf(word))].map((gram) => {
      const byLength = this.termsByGram.get(gram) ?? []
      const lists = byLength.slice(lowest, highest + 1)
      return { lists, size: lists.reduce((sum, list) => sum + list.length, 0) }
    })
    const rarest = listsByGram.sort((a, b) => a.size - b.size).slice(0, 3 * allowance + 2)
    const needed = Math.max(1, rarest.length - 3 * allowance)
    if (heldGrams.length < this.list.length) heldGrams = new Uint8Array(Math.max(this.list.length, heldGrams.length * 2))
    const found: Term[] = []
    const met: Term[] = []
    for (const { lists } of rarest) {
      for (const list of lists) {
        for (const term of list) {
          const held = ++heldGrams[term.number]!
          if (held === 1) met.push(term)
          if (held === needed && term.holders > 0 && editDistance(word, term.text, allowance) <= allowance) found.push(term)
        }
      }
    }
    for (const term of met) heldGrams[term.number] = 0
    return found
  }
}

/** What `term`'s bound on BM25 keeps of a document listed in its postings. */
function listed(term: Term, count: number, length: number): void {
  if (count > term.mostCount) term.mostCount = count
  if (length < term.leastLength) term.leastLength = length
}

/** Per term number: how many of the word's chosen trigrams `near` has met it holding (reset after each call). */
let heldGrams = new Uint8Array(1024)

function paddedGramsOf(text: string): string[] {
  return trigramsOf(`\u0002${text}\u0003`)
}
