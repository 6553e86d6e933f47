import type { z } from 'zod'
import { expect, it } from 'vitest'
import { changesDocumentSchema, entityCollectionDocumentSchema } from '../../src/contract/schemas.js'
import { useDemoRegistry } from '../support/demo.js'
import { readDocument } from '../support/documents.js'
import { describeEachStore, storeDialects } from '../stores/each-store.js'

describeEachStore(storeDialects, 'change feed', (dialect) => {
  const { store, get } = useDemoRegistry(dialect, { changesWindow: 100 })

  async function readAll(filter: string, limit = 100) {
    const changes = []
    let next: string | undefined = `/v1/entities/changes?filter=${encodeURIComponent(filter)}&page[limit]=${limit}`
    let cursor: string | null = null
    while (next) {
      const document: z.infer<typeof changesDocumentSchema> = await readDocument(await get(next), changesDocumentSchema)
      changes.push(...document.data)
      cursor = document.meta.cursor
      next = document.links.next
    }
    return { changes, cursor }
  }

  it('lists the 19 bill creations, following links.next through windows without matches', async () => {
    const { changes, cursor } = await readAll('type:legislation')
    expect(changes).toHaveLength(19)
    expect(changes.every((change) => change.attributes.changeType === 'create')).toBe(true)
    for (const change of changes) {
      const { data, links } = change.relationships.entity
      expect(data.type).toBe('legislation')
      expect(links.related).toBe(`http://registry.test/v1/entities/${data.id}`)
    }
    expect(new Set(changes.map((change) => change.relationships.entity.data.id)).size).toBe(19)
    const head = (await get('/v1/entities?page[limit]=1')).headers.get('change-feed-head')
    expect(cursor).toBe(head)
  })

  it('returns an empty page with an advanced cursor when a window holds no match', async () => {
    const first = await readDocument(await get('/v1/entities/changes?filter=type:nothing'), changesDocumentSchema)
    expect(first.data).toEqual([])
    expect(first.meta.cursor).toMatch(/^echg_/)
    expect(first.links.next).toContain(`page%5Bafter%5D=${first.meta.cursor}`)
    const second = await readDocument(await get(first.links.next!), changesDocumentSchema)
    expect(second.meta.cursor! > first.meta.cursor!).toBe(true)
  })

  it('reports updates, deletes and merges with their keys and survivor', async () => {
    const { cursor: start } = await readAll('type:person')
    const warehouse = store().warehouse
    await warehouse.upsert({ id: 'feedp1', type: 'person', name: 'Ada', status: 'serving' })
    await warehouse.upsert({ id: 'feedp1', type: 'person', name: 'Ada L.', status: 'serving' })
    await warehouse.upsert({ id: 'feedp2', type: 'person', name: 'Bea' })
    await warehouse.merge('feedp2', 'feedp1')
    await warehouse.delete('feedp1')
    const document = await readDocument(await get(`/v1/entities/changes?filter=type:person&page[after]=${start}`), changesDocumentSchema)
    expect(document.data.map((c) => [c.relationships.entity.data.id, c.attributes.changeType, c.attributes.changedKeys, c.attributes.mergedInto])).toEqual([
      ['feedp1', 'create', ['type', 'name', 'status'], null],
      ['feedp1', 'update', ['name'], null],
      ['feedp2', 'create', ['type', 'name'], null],
      ['feedp2', 'merge', [], 'feedp1'],
    ])
    // The delete's post-change snapshot is a tombstone: it matches no type filter, but a negation.
    const tombstones = await readDocument(await get(`/v1/entities/changes?filter=-type:person&page[after]=${start}`), changesDocumentSchema)
    expect(tombstones.data.map((c) => [c.type, c.relationships.entity.data, c.attributes.changeType])).toEqual([
      ['entity-change', { type: 'entity', id: 'feedp1' }, 'delete'],
    ])
  })

  it('carries Change-Feed-Head on list and changes responses', async () => {
    const list = await get('/v1/entities?page[limit]=1')
    await readDocument(list, entityCollectionDocumentSchema)
    expect(list.headers.get('change-feed-head')).toMatch(/^echg_[0-9a-z]+$/)
    const changes = await get('/v1/entities/changes?filter=type:person&page[limit]=1')
    expect(changes.headers.get('change-feed-head')).toBe(list.headers.get('change-feed-head'))
  })
})
