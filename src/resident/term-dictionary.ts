import { editDistance, trigramsOf } from '../search/text.js'
import { type Growable, growableUint32, growableUint8 } from './growable.js'

/** One term of a field: the documents that hold it (dead ones too, until compaction) and how often. */
export interface Term {
  text: string
  /** Its place in the dictionary's `list`: what forward columns hold. */
  number: number
  /** Document slots, ascending. */
  documents: Growable<Uint32Array>
  /** Occurrences in each of `documents` (at most 255 counted). */
  counts: Growable<Uint8Array>
  /** Live documents that hold it: BM25's document frequency. */
  holders: number
}

/**
 * The terms of one field (tokens, or names) with their postings, and the terms'
 * own trigrams: a typed word's near terms (typos) are found among the terms, a few thousand
 * trigram entries, never by walking documents.
 */
export class TermDictionary {
  readonly terms = new Map<string, Term>()
  readonly list: Term[] = []
  /** Trigrams of `\u0002term\u0003` to the terms that hold them: the edges count, so that a typo at either end still shares most. */
  private readonly termsByGram = new Map<string, Term[]>()

  /** The term, made on first use. */
  termOf(text: string): Term {
    let term = this.terms.get(text)
    if (term === undefined) {
      term = { text, number: this.list.length, documents: growableUint32(), counts: growableUint8(), holders: 0 }
      this.terms.set(text, term)
      this.list.push(term)
      for (const gram of new Set(paddedGramsOf(text))) {
        const holding = this.termsByGram.get(gram)
        if (holding === undefined) this.termsByGram.set(gram, [term])
        else holding.push(term)
      }
    }
    return term
  }

  /** Adds a document's terms (each with its count) to the postings; slots come in ascending order. */
  add(slot: number, counts: ReadonlyMap<string, number>): void {
    for (const [text, count] of counts) {
      const term = this.termOf(text)
      term.documents.push(slot)
      term.counts.push(Math.min(count, 255))
      term.holders++
    }
  }

  trim(): void {
    for (const term of this.list) {
      term.documents.trim()
      term.counts.trim()
    }
  }

  /** A document's terms no longer count as held (its postings stay until compaction, skipped as dead). */
  remove(counts: ReadonlyMap<string, number>): void {
    for (const text of counts.keys()) this.terms.get(text)!.holders--
  }

  /**
   * The held terms within `allowance` edits of `word`, itself included. An edit changes at most
   * three of the padded trigrams, so a term within `allowance` edits shares all but `3 * allowance`
   * of the word's: only those are compared.
   */
  near(word: string, allowance: number): Term[] {
    const grams = [...new Set(paddedGramsOf(word))]
    const needed = Math.max(1, grams.length - 3 * allowance)
    if (sharedGrams.length < this.list.length) sharedGrams = new Uint8Array(Math.max(this.list.length, sharedGrams.length * 2))
    const met: Term[] = []
    for (const gram of grams) {
      for (const term of this.termsByGram.get(gram) ?? []) if (sharedGrams[term.number]!++ === 0) met.push(term)
    }
    const found: Term[] = []
    for (const term of met) {
      const count = sharedGrams[term.number]!
      sharedGrams[term.number] = 0
      if (count >= needed && term.holders > 0 && Math.abs(term.text.length - word.length) <= allowance && editDistance(word, term.text, allowance) <= allowance) found.push(term)
    }
    return found
  }
}

/** Per term number: the typed word's trigrams it shares (reset after each `near`; a word with typos allowed has at most 34). */
let sharedGrams = new Uint8Array(1024)

function paddedGramsOf(text: string): string[] {
  return trigramsOf(`\u0002${text}\u0003`)
}
