// A full snapshot names the whole warehouse: what it lacks is deleted, one change each, unless that
// is more than the limit, which refuses it before anything changes.
import { tmpdir } from 'node:os'
import { expect, it } from 'vitest'
import { createMemoryBlobStore } from '../../src/memory/index.js'
import { importNdjson, SnapshotRefusedError, type DeleteLimit } from '../../src/warehouse/import.js'
import { describeEachStore, storeDialects, useStore } from '../stores/each-store.js'

const ids = Array.from({ length: 100 }, (_, i) => `p${String(i).padStart(3, '0')}`)
const record = (id: string, title = 'One') => JSON.stringify({ id, type: 'person', name: `Person ${id}`, title })

describeEachStore(storeDialects, 'a full snapshot', (dialect) => {
  const store = useStore(dialect)
  const importFull = (lines: string[], maxDelete?: DeleteLimit) =>
    importNdjson(lines, { warehouse: store().warehouse, blobs: createMemoryBlobStore(), baseDir: tmpdir(), batchSize: 7, full: maxDelete === undefined ? {} : { maxDelete } })
  const feed = async () => (await store().listChanges({ qualifiers: [], after: null, limit: 1000, window: 1000 })).changes
  const canonicalIds = async () => (await store().listEntities({ qualifiers: [], after: null, limit: 1000 })).entities.map((entity) => entity.id)
  /** 100 canonical entities, and one merged into the first (not canonical: never deleted as absent). */
  const load = async () => {
    expect(await importFull([...ids.map((id) => record(id)), record('merged'), JSON.stringify({ op: 'merge', id: 'merged', into: ids[0] })])).toMatchObject({ applied: 102, deleted: 0, errors: [] })
    return (await feed()).length
  }

  it('deletes exactly the entities it lacks (5%), one delete change each, after applying its lines', async () => {
    const before = await load()
    const lacking = ids.filter((_, i) => i % 20 === 3)
    const kept = ids.filter((id) => !lacking.includes(id))
    const report = await importFull([record(kept[0]!, 'Two'), ...kept.slice(1).map((id) => record(id)), record('p999')])
    expect(report).toEqual({ applied: 2, unchanged: 94, errors: [], deleted: 5 })
    expect(await canonicalIds()).toEqual([...kept, 'p999'])
    const changes = (await feed()).slice(before)
    expect(changes.map((change) => `${change.entityId} ${change.changeType}`)).toEqual([`${kept[0]} update`, 'p999 create', ...lacking.map((id) => `${id} delete`)])
    expect((await store().getEntity('merged'))?.state).toBe('merged')
    // The same file again: nothing left to delete, nothing changed.
    expect(await importFull([record(kept[0]!, 'Two'), ...kept.slice(1).map((id) => record(id)), record('p999')])).toEqual({ applied: 0, unchanged: 96, errors: [], deleted: 0 })
    expect(await feed()).toHaveLength(before + 7)
  })

  const lacking20 = [record(ids[20]!, 'Changed'), ...ids.slice(21).map((id) => record(id))]

  it('refuses one that would delete more than 10% (20%) before changing anything', async () => {
    const before = await load()
    const refused = await importFull(lacking20).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(SnapshotRefusedError)
    expect((refused as Error).message).toBe('a full snapshot would delete 20 of 100 entities, more than the limit (10%, 10 entities)')
    await expect(importFull(lacking20, { entities: 19 })).rejects.toThrow('would delete 20 of 100 entities, more than the limit (19)')
    expect(await feed()).toHaveLength(before)
    expect(await canonicalIds()).toEqual(ids)
    expect((await store().getEntity(ids[20]!))?.snapshot.title).toBe('One')
  })

  for (const maxDelete of [{ percent: 25 }, { entities: 300 }]) {
    it(`deletes 20% with a limit of ${JSON.stringify(maxDelete)}`, async () => {
      const before = await load()
      expect(await importFull(lacking20, maxDelete)).toEqual({ applied: 1, unchanged: 79, errors: [], deleted: 20 })
      expect(await canonicalIds()).toEqual(ids.slice(20))
      expect(await feed()).toHaveLength(before + 21)
    })
  }

  it('refuses one with a line that names no id: its entity would be deleted as absent', async () => {
    const before = await load()
    await expect(importFull([...ids.slice(1).map((id) => record(id)), '{"type":"person", broken'])).rejects.toThrow(
      new SnapshotRefusedError('line 100 names no entity id: a full snapshot must name each of its entities'),
    )
    expect(await feed()).toHaveLength(before)
  })
})
