import { describe, expect, it } from 'vitest'
import { TermDictionary } from '../../src/resident/term-dictionary.js'
import { editDistance, trigramsOf } from '../../src/search/text.js'

/** Words of 2 to 12 letters from a small alphabet (so that many lie within an edit or two of each other), from a fixed sequence. */
function wordsFrom(seed: number, count: number): string[] {
  let state = seed
  const next = (below: number) => (state = (state * 48271) % 2147483647) % below
  return Array.from({ length: count }, () => Array.from({ length: 2 + next(11) }, () => 'abcde'[next(5)]).join(''))
}

const paddedGrams = (text: string) => new Set(trigramsOf(`\u0002${text}\u0003`))

describe("the terms' near terms (typos)", () => {
  it('are every held term within the allowance of edits that shares a trigram with the word, and no other', () => {
    const dictionary = new TermDictionary()
    const terms = [...new Set(wordsFrom(3, 4000))]
    terms.forEach((term, slot) => dictionary.add(slot, new Map([[term, 1]]), 1))
    // A term no document holds any more is not near anything.
    const gone = terms[7]!
    dictionary.remove(new Map([[gone, 1]]))
    for (const word of wordsFrom(5, 300)) {
      for (const allowance of [1, 2]) {
        const grams = paddedGrams(word)
        const expected = terms.filter((term) => term !== gone && editDistance(word, term, allowance) <= allowance && [...paddedGrams(term)].some((gram) => grams.has(gram)))
        expect(dictionary.near(word, allowance).map((term) => term.text).sort(), `${word} within ${allowance}`).toEqual(expected.sort())
      }
    }
  })

  it('are answered again as the held terms change: a term held anew, held no more, or loaded at once', () => {
    const dictionary = new TermDictionary()
    const texts = (terms: readonly { text: string }[]) => terms.map((term) => term.text).sort()
    dictionary.add(0, new Map([['johnson', 1]]), 1)
    expect(texts(dictionary.near('jonson', 1))).toEqual(['johnson'])
    dictionary.add(1, new Map([['jonsson', 1]]), 1)
    expect(texts(dictionary.near('jonson', 1))).toEqual(['johnson', 'jonsson'])
    dictionary.remove(new Map([['johnson', 1]]))
    expect(texts(dictionary.near('jonson', 1))).toEqual(['jonsson'])
    // A term made (as a load makes them) but held by no document until its postings are made.
    dictionary.termOf('jonsen')
    expect(texts(dictionary.near('jonson', 1))).toEqual(['jonsson'])
    dictionary.index({ starts: Uint32Array.of(0, 1, 2, 3), terms: Uint32Array.of(0, 1, 2) }, Uint8Array.of(1, 1, 1), 3)
    expect(texts(dictionary.near('jonson', 1))).toEqual(['johnson', 'jonsen', 'jonsson'])
    expect(texts(dictionary.near('jonson', 0))).toEqual([])
  })
})
