/** Gets by id asked in one turn of the event loop are read in one statement (PostgreSQL's stores). */
import { describe, expect, it } from 'vitest'
import type { StoredEntity } from '../../src/contract/entity.js'
import { batchedGets } from '../../src/kysely/batched-gets.js'

const entity = (id: string) => ({ id, state: 'canonical', mergedInto: null, snapshot: { id, type: 'person' } }) as unknown as StoredEntity

function counted(known: string[]) {
  const reads: string[][] = []
  const get = batchedGets(
    async (id) => {
      reads.push([id])
      return known.includes(id) ? entity(id) : null
    },
    async (ids) => {
      reads.push(ids)
      return ids.filter((id) => known.includes(id)).map(entity)
    },
  )
  return { get, reads }
}

describe('batchedGets', () => {
  it('reads the gets asked together once, each id once, and answers each its own entity or null', async () => {
    const { get, reads } = counted(['a', 'b'])
    const answers = await Promise.all(['a', 'b', 'a', 'missing'].map((id) => get(id)))
    expect(answers.map((answer) => answer?.id ?? null)).toEqual(['a', 'b', 'a', null])
    expect(reads).toEqual([['a', 'b', 'missing']])
  })

  it('reads a lone get (and repeats of one id) by the single read', async () => {
    const { get, reads } = counted(['a'])
    expect((await get('a'))?.id).toBe('a')
    expect((await Promise.all([get('a'), get('a')])).map((answer) => answer?.id)).toEqual(['a', 'a'])
    expect(reads).toEqual([['a'], ['a']])
  })

  it('reads gets asked after a batch left in a batch of their own, after the first was asked', async () => {
    const { get, reads } = counted(['a', 'b', 'c'])
    const first = get('a')
    await first
    await Promise.all([get('b'), get('c')])
    expect(reads).toEqual([['a'], ['b', 'c']])
  })

  it('fails every get of a batch whose read fails, and reads the next batch anew', async () => {
    let fail = true
    const get = batchedGets(
      async () => null,
      async (ids) => {
        if (fail) throw new Error('store away')
        return ids.map(entity)
      },
    )
    const failed = await Promise.allSettled([get('a'), get('b'), get('b')])
    expect(failed.map((result) => result.status)).toEqual(['rejected', 'rejected', 'rejected'])
    fail = false
    expect((await Promise.all([get('a'), get('b')])).map((answer) => answer?.id)).toEqual(['a', 'b'])
  })
})
