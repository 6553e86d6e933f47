import { describe, expect, it } from 'vitest'
import { createMemoryStore } from '../../src/memory/index.js'
import { WarehouseError } from '../../src/ports/warehouse.js'


async function changesOf(store: ReturnType<typeof createMemoryStore>) {
  return (await store.listChanges({ qualifiers: [], after: null, limit: 100, window: 1000 })).changes
}

describe('warehouse rules', () => {
  it('records create, update (changed keys only), no-op, delete and re-create', async () => {
    const store = createMemoryStore()
    const w = store.warehouse
    expect(await w.upsert({ id: 'p1', type: 'person', name: 'A', party: 'X' })).toEqual({ changeType: 'create', entityId: 'p1', changedKeys: ['type', 'name'] })
    expect(await w.upsert({ id: 'p1', type: 'person', name: 'A', party: 'Y' })).toBeNull()
    expect(await w.upsert({ id: 'p1', type: 'person', name: 'B', status: 'serving' })).toEqual({ changeType: 'update', entityId: 'p1', changedKeys: ['name', 'status'] })
    expect(await w.delete('p1')).toEqual({ changeType: 'delete', entityId: 'p1', changedKeys: ['type', 'name', 'status'] })
    expect(await w.delete('p1')).toBeNull()
    expect(await w.upsert({ id: 'p1', type: 'person', name: 'B' })).toMatchObject({ changeType: 'create', changedKeys: ['type', 'name'] })
    const changes = await changesOf(store)
    expect(changes.map((c) => c.changeType)).toEqual(['create', 'update', 'delete', 'create'])
    expect(changes[2]!.snapshot).toEqual({ texts: [] })
    expect(changes.map((c) => c.changeId)).toEqual([...changes.map((c) => c.changeId)].sort())
  })

  it('merges into a canonical target and refuses self, cycles, dead ends and missing ids', async () => {
    const store = createMemoryStore()
    const w = store.warehouse
    for (const id of ['a', 'b', 'c', 'd']) await w.upsert({ id, type: 'person', name: id })
    expect(await w.merge('a', 'b')).toEqual({ changeType: 'merge', entityId: 'a', changedKeys: [] })
    await w.merge('b', 'c')
    const merges = (await changesOf(store)).filter((c) => c.changeType === 'merge')
    expect(merges.map((c) => [c.entityId, c.mergedInto, c.snapshot.type])).toEqual([['a', 'b', 'person'], ['b', 'c', 'person']])

    const refusal = (promise: Promise<unknown>) => promise.then(() => null, (error: WarehouseError) => error.code)
    expect(await refusal(w.merge('d', 'd'))).toBe('invalid_merge')
    expect(await refusal(w.merge('c', 'a'))).toBe('invalid_merge')
    expect(await refusal(w.merge('d', 'zzz'))).toBe('not_found')
    expect(await refusal(w.merge('zzz', 'd'))).toBe('not_found')
    await w.delete('d')
    expect(await refusal(w.merge('c', 'd'))).toBe('invalid_merge')
    // Merging into a merged id ends at its canonical survivor.
    await w.upsert({ id: 'e', type: 'person', name: 'e' })
    await w.merge('e', 'a')
    expect((await changesOf(store)).at(-1)).toMatchObject({ entityId: 'e', mergedInto: 'c' })
  })

  it('drains: a delete in the feed that carries nothing of the withdrawn entity', async () => {
    const store = createMemoryStore()
    await store.warehouse.upsert({ id: 'x', type: 'person', name: 'Secret' })
    expect(await store.warehouse.drain('x')).toMatchObject({ changeType: 'delete' })
    expect((await changesOf(store)).at(-1)!.snapshot).toEqual({ texts: [] })
    expect((await store.getEntity('x'))!.state).toBe('drained')
  })
})
