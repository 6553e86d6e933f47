import { describe, expect, it } from 'vitest'
import { Documents } from '../../src/resident/documents.js'
import { IdColumn } from '../../src/resident/id-column.js'

/** Ids of every shape the index may be given: short and long, digits, units beyond ASCII, a prefix of another, a lone surrogate. */
function ids(count: number): string[] {
  const shapes = ['', 'x', 'é', '😀', '\ud800', '0']
  return Array.from({ length: count }, (_, n) => `${(n * 7919).toString(36)}.${shapes[n % shapes.length]}`).concat(['a', 'ab', 'abc', 'z'.repeat(10_000)])
}

describe('the resident index’s ids (IdColumn)', () => {
  it('finds each id’s slot and gives it back as it was, past the table’s growth', () => {
    const column = new IdColumn()
    const all = ids(5_000)
    for (const [slot, id] of all.entries()) expect(column.push(id)).toBe(slot)
    expect(column.length).toBe(all.length)
    for (const [slot, id] of all.entries()) {
      expect(column.lastSlotOf(id)).toBe(slot)
      expect(column.at(slot)).toBe(id)
    }
    for (const missing of ['nope', 'a'.repeat(3), 'ab ', '', 'z'.repeat(9_999)]) expect(column.lastSlotOf(missing)).toBe(all.includes(missing) ? all.indexOf(missing) : -1)
  })

  it('gives the newest slot of an id taken again', () => {
    const column = new IdColumn()
    column.reserve(10, 4)
    for (const id of ['a', 'b', 'a', 'c', 'a']) column.push(id)
    expect([column.lastSlotOf('a'), column.lastSlotOf('b'), column.lastSlotOf('c')]).toEqual([4, 1, 3])
    // Taken again and again past the table's growth (and the rehashing it does): still the newest.
    for (let n = 0; n < 200; n++) column.push(n % 3 === 0 ? 'b' : `x${n}`)
    expect([column.lastSlotOf('a'), column.lastSlotOf('b'), column.lastSlotOf('c')]).toEqual([4, 203, 3])
  })

  it('orders slots as JavaScript orders their ids', () => {
    const column = new IdColumn()
    const all = ids(300)
    all.forEach((id) => column.push(id))
    const bySlots = Array.from(all.keys()).sort((a, b) => column.compare(a, b)).map((slot) => all[slot])
    expect(bySlots).toEqual([...all].sort())
    expect(column.compare(all.indexOf('ab'), all.indexOf('ab'))).toBe(0)
  })
})

describe('documents by id', () => {
  it('know the live slot of an entity, none once removed, the new one once updated', () => {
    const documents = new Documents(0)
    const entity = (id: string, title: string) => ({ id, fields: {}, tokens: [title], names: [], vector: new Float32Array(0) })
    documents.put(entity('e1', 'one'))
    documents.put(entity('e2', 'two'))
    documents.put(entity('e1', 'uno'))
    expect([documents.slotOf('e1'), documents.slotOf('e2'), documents.slotOf('e3')]).toEqual([2, 1, undefined])
    expect(documents.tokensOf(documents.slotOf('e1')!)).toEqual(['uno'])
    documents.remove('e1')
    expect(documents.slotOf('e1')).toBeUndefined()
    expect(documents.live).toBe(1)
    documents.put(entity('e1', 'again'))
    expect(documents.entityAt(documents.slotOf('e1')!)).toMatchObject({ id: 'e1', tokens: ['again'] })
  })
})
