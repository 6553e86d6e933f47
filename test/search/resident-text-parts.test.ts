import { describe, expect, it } from 'vitest'
import { GramPostings } from '../../src/resident/gram-postings.js'
import { growableUint32 } from '../../src/resident/growable.js'
import { trigramsOf } from '../../src/search/text.js'

describe("the resident index's trigram postings", () => {
  it('lists the slots whose names hold every trigram, as searching each text would', () => {
    let state = 7
    const random = () => (state = (state * 48271) % 2147483647) / 2147483647
    const letters = 'abcdeé'
    const texts = Array.from({ length: 3000 }, () => Array.from({ length: 2 + Math.floor(random() * 12) }, () => letters[Math.floor(random() * letters.length)]).join(''))
    const postings = new GramPostings()
    texts.forEach((text, slot) => postings.add(slot, text))
    const into = growableUint32()
    for (const name of ['abc', 'aaaa', 'abcab', 'éab', 'ddd', 'cabé', 'eeeee', 'zzz', 'abz']) {
      const grams = [...new Set(trigramsOf(name))]
      postings.holdingAll(grams, into)
      const expected = texts.flatMap((text, slot) => (grams.every((gram) => text.includes(gram)) ? [slot] : []))
      expect(Array.from(into.values.subarray(0, into.length)), name).toEqual(expected)
    }
  })
})
