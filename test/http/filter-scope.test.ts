import { expect, it } from 'vitest'
import type { z } from 'zod'
import { changesDocumentSchema } from '../../src/contract/schemas.js'
import { describeEachStore, storeDialects, useStore } from '../stores/each-store.js'
import { testRegistry } from '../support/demo.js'
import { expectError, readDocument } from '../support/documents.js'

const WA = encodeURIComponent('type:person jurisdiction:US-WA')

describeEachStore(storeDialects, 'changes with filterScope=either', (dialect) => {
  const store = useStore(dialect)

  async function feed(query: string) {
    const { get } = testRegistry(store())
    return readDocument(await get(`/v1/entities/changes?${query}`), changesDocumentSchema)
  }
  const summary = (document: Awaited<ReturnType<typeof feed>>) =>
    document.data.map((change) => [change.relationships.entity.data.id, change.attributes.changeType, change.meta?.matchesFilter])

  it('sees an entity leave the subset: moved out, deleted, drained, merged away', async () => {
    const { warehouse } = store()
    for (const id of ['p1', 'p2', 'p3', 'p4', 'p5']) await warehouse.upsert({ id, type: 'person', name: id, jurisdiction: 'US-WA' })
    await warehouse.upsert({ id: 'q1', type: 'person', name: 'q1', jurisdiction: 'US-OR' })
    await warehouse.upsert({ id: 'p1', type: 'person', name: 'p1', jurisdiction: 'US-OR' })
    await warehouse.delete('p2')
    await warehouse.drain('p3')
    await warehouse.merge('p4', 'q1')
    await warehouse.upsert({ id: 'q1', type: 'person', name: 'q1', jurisdiction: 'US-WA' })
    await warehouse.upsert({ id: 'p5', type: 'person', name: 'p5 renamed', jurisdiction: 'US-WA' })

    expect(summary(await feed(`filter=${WA}&filterScope=either`)).slice(5)).toEqual([
      ['p1', 'update', false],
      ['p2', 'delete', false],
      ['p3', 'delete', false],
      ['p4', 'merge', false],
      ['q1', 'update', true],
      ['p5', 'update', true],
    ])
    // Without the extension the feed is as the interface specifies: post-change snapshots only, no meta.
    const plain = await feed(`filter=${WA}`)
    expect(summary(plain).slice(5)).toEqual([
      ['p4', 'merge', undefined],
      ['q1', 'update', undefined],
      ['p5', 'update', undefined],
    ])
    expect(plain.data.every((change) => change.meta === undefined)).toBe(true)
  })

  it('carries filterScope into links.next and pages through windows', async () => {
    const { warehouse } = store()
    for (let index = 0; index < 5; index++) await warehouse.upsert({ id: `p${index}`, type: 'person', jurisdiction: 'US-WA' })
    for (let index = 0; index < 5; index++) await warehouse.delete(`p${index}`)
    const { get } = testRegistry(store(), { changesWindow: 3 })
    const seen: [string, boolean | undefined][] = []
    for (let next: string | undefined = `/v1/entities/changes?filter=${WA}&filterScope=either&page[limit]=2`; next; ) {
      const page: z.infer<typeof changesDocumentSchema> = await readDocument(await get(next), changesDocumentSchema)
      if (page.links.next) expect(new URL(page.links.next).searchParams.get('filterScope')).toBe('either')
      seen.push(...page.data.map((change): [string, boolean | undefined] => [change.attributes.changeType, change.meta?.matchesFilter]))
      next = page.links.next
    }
    expect(seen).toEqual([...Array(5).fill(['create', true]), ...Array(5).fill(['delete', false])])
  })

  it('refuses an unknown filterScope with a 400 naming it', async () => {
    const { get } = testRegistry(store())
    await expectError(await get(`/v1/entities/changes?filter=${WA}&filterScope=before`), 400, 'invalid_filter', 'filterScope')
  })
})
