import { describe, expect, it } from 'vitest'
import { parseGffs } from '../../src/gffs/parse.js'
import { Documents, KEPT_FIELDS } from '../../src/resident/documents.js'
import { prefilterOf } from '../../src/resident/prefilter.js'
import { VectorPartitions } from '../../src/resident/vector-partitions.js'
import { allowedSlots, exactHits, unitOf } from '../../src/resident/vector-ranking.js'

const DIMENSIONS = 24

/** A fixed sequence of vectors with components in [-1, 1). */
function vectorsFrom(seed: number) {
  let state = seed
  const next = () => (state = (state * 48271) % 2147483647) / 2147483647
  return () => Float32Array.from({ length: DIMENSIONS }, () => 2 * next() - 1)
}

/** The live slots of `type`, in slot order. */
function slotsOfType(documents: Documents, type: string): Uint32Array {
  const { codes, values } = documents.fields.type
  return Uint32Array.from({ length: documents.ids.length }, (_, slot) => slot).filter((slot) => documents.alive.values[slot] === 1 && values[codes.values[slot]!] === type)
}

function documentsOf(count: number, vectorOf: () => Float32Array): Documents {
  const documents = new Documents(DIMENSIONS)
  for (let n = 0; n < count; n++) documents.put({ id: `e${String(n).padStart(6, '0')}`, fields: { type: n % 5 === 0 ? 'rare' : 'common' }, tokens: [], names: [], vector: vectorOf() })
  return documents
}

describe('the nearest vectors among a prefilter\'s slots', () => {
  // More slots than one call of the kernel scores (16,384), so that the gathered vectors are scanned in several.
  const vectorOf = vectorsFrom(17)
  const documents = documentsOf(25_000, vectorOf)
  const partitions = VectorPartitions.trained(documents)

  it('are those exact search finds among them, asked once or again (their vectors gathered)', () => {
    const common = slotsOfType(documents, 'common')
    expect(common.length).toBeGreaterThan(16_384)
    for (let query = 0; query < 5; query++) {
      const vector = vectorOf()
      const exact = exactHits(documents, unitOf(vector, DIMENSIONS), common, 10)
      expect(partitions.nearestAmong(vector, common, 10)).toEqual(exact)
      expect(partitions.nearestAmong(vector, common, 10)).toEqual(exact)
    }
  })

  it('find the vectors added since they were first asked, in slots asked anew', () => {
    const vector = vectorOf()
    const before = slotsOfType(documents, 'rare')
    partitions.nearestAmong(vector, before, 10)
    // The query itself, added: the nearest there is, in a partition that moves when full (its room: an eighth more than it held).
    for (let n = 0; n < 200; n++) {
      documents.put({ id: `new${n}`, fields: { type: 'rare' }, tokens: [], names: [], vector })
      partitions.add(documents.slotOf(`new${n}`)!)
    }
    const after = slotsOfType(documents, 'rare')
    const hits = partitions.nearestAmong(vector, after, 10)
    // Tied with the 200 added, which ten are kept is the scan's order, not ids' (`VectorPartitions`).
    expect(hits.every((hit) => hit.id.startsWith('new'))).toBe(true)
    expect(hits.map((hit) => hit.score)).toEqual(exactHits(documents, unitOf(vector, DIMENSIONS), after, 10).map((hit) => hit.score))
  })
})

describe('the slots a prefilter keeps', () => {
  it('are none past the most asked, and all of them when asked again for more (a count that stopped short is not the whole)', () => {
    const documents = documentsOf(1_000, vectorsFrom(31))
    const common = prefilterOf(documents, parseGffs('type:common', { allowFreeText: false }).qualifiers)!
    expect(allowedSlots(documents, common, 100)).toBeNull()
    expect(allowedSlots(documents, common, 50)).toBeNull()
    expect(allowedSlots(documents, common, 1_000)).toHaveLength(800)
    expect(allowedSlots(documents, common, 799)).toBeNull()
  })
})

describe('vectors that many slots share', () => {
  // As with the default embedder the persons of a role whose names no word vector knows.
  const random = vectorsFrom(23)
  const shared = [random(), random(), random()]
  const documents = documentsOf(12_000, () => random())
  for (let n = 0; n < 9_000; n++) documents.put({ id: `s${String(n).padStart(6, '0')}`, fields: { type: n % 2 === 0 ? 'even' : 'odd' }, tokens: [], names: [], vector: shared[n % 3]! })
  const partitions = VectorPartitions.trained(documents)
  const live = Uint32Array.from({ length: documents.ids.length }, (_, slot) => slot)

  it('are held once each, and their slots found as exact search finds them: the first placed of those tied kept first', () => {
    expect(partitions.distinctVectors).toBe(12_000 + 3)
    for (const vector of shared) {
      const hits = partitions.nearest(vector, null, 100, 0)
      const exact = exactHits(documents, unitOf(vector, DIMENSIONS), live, 100)
      expect(hits.map((hit) => hit.score)).toEqual(exact.map((hit) => hit.score))
      // Tied, the first 100 of the 3,000 placed with it (ids in slot order): exact search's tie order too.
      expect(hits.map((hit) => hit.id)).toEqual(exact.map((hit) => hit.id))
      expect(new Set(hits.map((hit) => hit.id.slice(0, 1)))).toEqual(new Set(['s']))
    }
  })

  it('are offered past those a prefilter refuses or that were removed, and join their vector\'s slots when written later', () => {
    const vector = shared[0]!
    const odd = prefilterOf(documents, parseGffs('type:odd', { allowFreeText: false }).qualifiers)
    const hits = partitions.nearest(vector, odd, 50, 0)
    expect(hits).toHaveLength(50)
    expect(hits.every((hit) => documents.fields.type.values[documents.fields.type.codes.values[documents.slotOf(hit.id)!]!] === 'odd')).toBe(true)
    const first = partitions.nearest(vector, null, 10, 0).map((hit) => hit.id)
    documents.remove(first[0]!)
    documents.put({ id: 't-late', fields: {}, tokens: [], names: [], vector })
    partitions.add(documents.slotOf('t-late')!)
    expect(partitions.distinctVectors).toBe(12_000 + 3)
    const after = partitions.nearest(vector, null, 3_000, 0).map((hit) => hit.id)
    expect(after).not.toContain(first[0])
    expect(after).toContain('t-late')
    expect(partitions.vectorOf(documents.slotOf('t-late')!)).toEqual(partitions.vectorOf(documents.slotOf(first[1]!)!))
  })
})

describe('vectors that all the slots of one type share', () => {
  // As the catalogue's persons of a role: a prefilter on another type refuses the whole chain, unwalked.
  const random = vectorsFrom(29)
  const shared = random()
  const documents = documentsOf(6_000, () => random())
  for (let n = 0; n < 20_000; n++) documents.put({ id: `p${String(n).padStart(6, '0')}`, fields: { type: 'person' }, tokens: [], names: [], vector: shared })
  const partitions = VectorPartitions.trained(documents)
  const prefilter = (q: string) => prefilterOf(documents, parseGffs(q, { allowFreeText: false }).qualifiers)!
  // One prefilter asked again and again, as the resident index keeps it until a write: its verdicts on positions are kept too.
  const common = prefilter('type:common')
  const exactAmongCommon = (vector: Float32Array, limit: number) => exactHits(documents, unitOf(vector, DIMENSIONS), slotsOfType(documents, 'common'), limit)

  it('are passed over by a prefilter that refuses their type, which finds what exact search finds among the slots it allows, asked again', () => {
    const person = documents.fields.type.codeOf.get('person')!
    expect(common.refusesEvery(Uint32Array.from(KEPT_FIELDS, (field) => (field === 'type' ? person : 0)))).toBe(true)
    for (const vector of [shared, random(), shared, random()]) expect(partitions.nearest(vector, common, 20, documents.live)).toEqual(exactAmongCommon(vector, 20))
    // Allowed, the chain is walked as before: its first placed, tied, come first.
    const persons = partitions.nearest(shared, prefilter('type:person'), 20, 0)
    expect(persons.map((hit) => hit.id)).toEqual(Array.from({ length: 20 }, (_, n) => `p${String(n).padStart(6, '0')}`))
  })

  it('are walked again once a slot of another type shares the vector, and that slot is found', () => {
    documents.put({ id: 'c-late', fields: { type: 'common' }, tokens: [], names: [], vector: shared })
    partitions.add(documents.slotOf('c-late')!)
    const hits = partitions.nearest(shared, common, 5, documents.live)
    expect(hits[0]!.id).toBe('c-late')
    expect(hits.map((hit) => hit.score)).toEqual(exactAmongCommon(shared, 5).map((hit) => hit.score))
  })
})

describe('the vectors the partitions take from the documents', () => {
  it('are the documents\' own, read through the partitions: after training, writes, moves and training again', () => {
    const vectorOf = vectorsFrom(5)
    const documents = documentsOf(300, vectorOf)
    const asPut = (slot: number) => documents.entityAt(slot).vector
    const before = Array.from({ length: documents.ids.length }, (_, slot) => asPut(slot))
    let partitions = VectorPartitions.trained(documents)
    expect(Array.from({ length: documents.ids.length }, (_, slot) => asPut(slot))).toEqual(before)
    // Past four times what they were trained for: each vector added to its partition (partitions moved when full), then trained again.
    for (let n = 300; n < 1_300; n++) {
      documents.put({ id: `w${n}`, fields: {}, tokens: [], names: [], vector: vectorOf() })
      before.push(asPut(n))
      partitions.add(n)
    }
    expect(Array.from({ length: documents.ids.length }, (_, slot) => asPut(slot))).toEqual(before)
    partitions = VectorPartitions.trained(documents)
    expect(Array.from({ length: documents.ids.length }, (_, slot) => asPut(slot))).toEqual(before)
    expect(partitions.vectorOf(1_000)).toEqual(documents.vectorOf(1_000))
  })
})
