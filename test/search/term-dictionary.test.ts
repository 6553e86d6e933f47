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
})
