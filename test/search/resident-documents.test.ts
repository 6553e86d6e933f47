import { describe, expect, it } from 'vitest'
import type { IndexedEntity } from '../../src/ports/search-index.js'
import { Documents, KEPT_FIELDS } from '../../src/resident/documents.js'
import { countOf, fieldLengthOf, LONG_FIELD } from '../../src/resident/term-dictionary.js'
import { trigramsOf } from '../../src/search/text.js'

/** Entities of few words and names (terms held often, repeated in one entity, names of letters beyond ASCII), ids put again in the load and after it. */
function entities(count: number): IndexedEntity[] {
  let seed = 7
  const next = (below: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31
    return Math.floor((seed / 2 ** 31) * below)
  }
  const words = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zoë', 'müller', '😀x']
  const made: IndexedEntity[] = Array.from({ length: count }, (_, n): IndexedEntity => {
    const pick = (most: number) => Array.from({ length: next(most + 1) }, () => words[next(words.length)]!)
    const vector = Float32Array.from({ length: 4 }, () => next(200) - 100)
    return { id: `e${n % 297}`, fields: { type: ['person', 'bill'][next(2)]!, ...(next(3) === 0 ? {} : { jurisdiction: `US-${next(4)}` }) }, tokens: pick(6), names: pick(3), vector }
  })
  return made
}

/** What ranking reads of documents: every term's live postings (slot, count and field length) and holders, the trigrams' and the kept fields' live slots. */
function postingsOf(documents: Documents) {
  const live = (slots: ArrayLike<number>, length: number) => Array.from(slots).slice(0, length).filter((slot) => documents.alive.values[slot] === 1)
  const terms = (dictionary: Documents['tokens']) =>
    Object.fromEntries(
      [...dictionary.terms.values()].map((term) => {
        const postings = Array.from(term.documents.values.subarray(0, term.documents.length), (slot, at) => [slot, term.occurrences.values[at]!])
        return [term.text, { holders: term.holders, postings: postings.filter(([slot]) => documents.alive.values[slot!] === 1) }]
      }),
    )
  const grams = new Set(Array.from({ length: documents.ids.length }, (_, slot) => slot).flatMap((slot) => trigramsOf(documents.namesTextOf(slot))))
  return {
    tokens: terms(documents.tokens),
    names: terms(documents.names),
    grams: Object.fromEntries([...grams].map((gram) => [gram, { holders: documents.grams.of(gram)!.holders, slots: live(documents.grams.of(gram)!.documents.values, documents.grams.of(gram)!.documents.length) }])),
    fields: KEPT_FIELDS.map((field) => documents.fields[field].slots.map((slots) => live(slots.values, slots.length))),
    statistics: [documents.tokenStatistics, documents.nameStatistics, documents.gramStatistics],
  }
}

describe("the resident index's documents, loaded", () => {
  it('have the postings that putting them one at a time makes, and take writes after the load as they would', () => {
    const all = entities(400)
    const [first, later] = [all.slice(0, 300), all.slice(300)]
    const oneByOne = new Documents(4)
    const loaded = Documents.forLoad(4)
    loaded.reserve(first.length)
    for (const entity of first) {
      oneByOne.put(entity)
      loaded.put(entity)
    }
    loaded.loaded()
    expect(postingsOf(loaded)).toEqual(postingsOf(oneByOne))
    // Writes past the exact room of the loaded postings: every list grows out of its shared array.
    for (const entity of later) {
      oneByOne.put(entity)
      loaded.put(entity)
    }
    for (const id of ['e1', 'e2', 'e250']) {
      oneByOne.remove(id)
      loaded.remove(id)
    }
    expect(postingsOf(loaded)).toEqual(postingsOf(oneByOne))
    for (const documents of [loaded, oneByOne]) expectBoundsHold(documents)
    expect(namedSlotsOf(loaded)).toEqual(namedSlotsOf(oneByOne))
    expect(loaded.entityAt(loaded.slotOf('e3')!)).toEqual(oneByOne.entityAt(oneByOne.slotOf('e3')!))
  })
})

/**
 * Each term's bound on its BM25 (`mostCount`, `leastLength`) holds for every live posting, and is
 * reached by one of its postings (dead ones too): it is the postings' own, not a looser one. Each
 * posting holds its slot's field length (up to `LONG_FIELD`).
 */
function expectBoundsHold(documents: Documents) {
  for (const [dictionary, lengths] of [
    [documents.tokens, documents.tokenLengths.values],
    [documents.names, documents.nameLengths.values],
  ] as const) {
    for (const term of dictionary.terms.values()) {
      const slots = Array.from(term.documents.values.subarray(0, term.documents.length))
      const occurrences = Array.from(term.occurrences.values.subarray(0, term.documents.length))
      if (slots.length === 0) continue
      expect(Math.max(...occurrences.map(countOf)), term.text).toBe(term.mostCount)
      expect(occurrences.map(fieldLengthOf), term.text).toEqual(slots.map((slot) => Math.min(lengths[slot]!, LONG_FIELD)))
      expect(Math.min(...slots.map((slot) => lengths[slot]!)), term.text).toBe(term.leastLength)
    }
  }
}

/** The slots whose bit says they have names. */
function namedSlotsOf(documents: Documents): number[] {
  return Array.from({ length: documents.ids.length }, (_, slot) => slot).filter((slot) => (documents.namedSlots.values[slot >>> 5]! & (1 << (slot & 31))) !== 0)
}

describe("the resident index's documents, their names' bits", () => {
  it('mark the slots that have names, and those alone', () => {
    const documents = new Documents(4)
    const all = entities(200)
    for (const entity of all) documents.put(entity)
    expect(namedSlotsOf(documents)).toEqual(all.flatMap((entity, slot) => (entity.names.length > 0 ? [slot] : [])))
  })
})
