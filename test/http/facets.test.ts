import { expect, it } from 'vitest'
import type { z } from 'zod'
import { entityCollectionDocumentSchema, facetsDocumentSchema } from '../../src/contract/schemas.js'
import { DEMO_RECORDS, importDemo, testRegistry, useDemoRegistry } from '../support/demo.js'
import { expectError, readDocument } from '../support/documents.js'
import { describeEachStore, sqlDialects, storeDialects } from '../stores/each-store.js'

describeEachStore(storeDialects, 'facets', (dialect) => {
  const { store, get } = useDemoRegistry(dialect)

  /** Every entity of a filter's list pages. */
  async function listed(filter: string) {
    const entities: { type: string; attributes: Record<string, unknown> }[] = []
    for (let next: string | undefined = `/v1/entities?page[limit]=100${filter === '' ? '' : `&filter=${encodeURIComponent(filter)}`}`; next; ) {
      const page: z.infer<typeof entityCollectionDocumentSchema> = await readDocument(await get(next), entityCollectionDocumentSchema)
      entities.push(...page.data)
      next = page.links.next
    }
    return entities
  }

  const facetsOf = async (query: string) => (await readDocument(await get(`/v1/facets${query}`), facetsDocumentSchema)).meta

  // Filters on facet fields alone are answered from kept counts; the others count the entities.
  for (const filter of ['', 'type:person', 'type:person jurisdiction:US-WA', 'status:~current -type:committee', 'type:nothing', 'name:~john type:person', 'displayDate:2000..2012-12-31']) {
    it(`counts exactly what the list pages hold${filter === '' ? '' : ` for ${filter}`}`, async () => {
      const entities = await listed(filter)
      const meta = await facetsOf(`?fields=type,jurisdiction,status${filter === '' ? '' : `&filter=${encodeURIComponent(filter)}`}`)
      expect(meta.total).toBe(entities.length)
      const tally = (valueOf: (entity: (typeof entities)[number]) => unknown) => {
        const counts = new Map<string, number>()
        for (const entity of entities) {
          const value = valueOf(entity)
          if (typeof value === 'string') counts.set(value, (counts.get(value) ?? 0) + 1)
        }
        return [...counts].map(([value, count]) => ({ value, count })).sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : 1)).slice(0, 50)
      }
      expect(meta.facets).toEqual({
        type: tally((entity) => entity.type),
        jurisdiction: tally((entity) => entity.attributes.jurisdiction),
        status: tally((entity) => entity.attributes.status),
      })
    })
  }

  it('counts every facet field when none is named, each at most 50 values, and links itself', async () => {
    const response = await get('/v1/facets')
    expect(response.headers.get('change-feed-head')).toBe(await store().feedHead())
    const document = await readDocument(response, facetsDocumentSchema)
    expect(Object.keys(document.meta.facets)).toEqual(['type', 'jurisdiction', 'localType', 'authority', 'status'])
    expect(document.meta.total).toBe(new Set(DEMO_RECORDS.map((record) => record.id)).size)
    expect(document.meta.facets.jurisdiction!.length).toBeLessThanOrEqual(50)
    expect(document.links.self).toBe('http://registry.test/v1/facets?fields=type%2Cjurisdiction%2ClocalType%2Cauthority%2Cstatus')
  })

  it('answers from a kept answer until the feed moves, then counts again', async () => {
    const before = await facetsOf('?fields=type&filter=type:person')
    await store().warehouse.upsert({ id: 'facetprobe1', type: 'person', name: 'Probe' })
    try {
      expect((await facetsOf('?fields=type&filter=type:person')).total).toBe(before.total + 1)
    } finally {
      await store().warehouse.delete('facetprobe1')
    }
    expect((await facetsOf('?fields=type&filter=type:person')).total).toBe(before.total)
  })

  it('refuses a field it cannot count, a field named twice, a bad filter and an unknown parameter with 400', async () => {
    await expectError(await get('/v1/facets?fields=type,color'), 400, 'unsupported_field', 'fields')
    await expectError(await get('/v1/facets?fields=name'), 400, 'unsupported_field', 'fields')
    await expectError(await get('/v1/facets?fields='), 400, 'unsupported_field', 'fields')
    await expectError(await get('/v1/facets?fields=type,type'), 400, 'unsupported_field', 'fields')
    await expectError(await get('/v1/facets?fields=type&fields=status'), 400, 'invalid_filter', 'fields')
    await expectError(await get('/v1/facets?filter=type:'), 400, 'invalid_filter', 'filter')
    await expectError(await get('/v1/facets?filter=senator'), 400, 'free_text_not_allowed', 'filter')
    await expectError(await get('/v1/facets?sort=count'), 400, 'unknown_parameter', 'sort')
  })
})

describeEachStore(sqlDialects, 'facets bounded', (dialect) => {
  it('refuses a filter on other fields that leaves more entities to read than the store allows, naming filter', async () => {
    const store = await dialect.open({ facetScanLimit: 100 })
    try {
      await importDemo(store.warehouse)
      const { get } = testRegistry(store)
      const refused = await expectError(await get('/v1/facets?filter=name:~john'), 400, 'filter_too_broad', 'filter')
      expect(refused.detail).toContain(`would read ${DEMO_RECORDS.length}`)
      // The facet-field qualifiers narrow what is read to the 19 bills: within the bound.
      expect((await get('/v1/facets?filter=type:legislation%20title:~act')).status).toBe(200)
      // A filter on facet fields alone reads no entity at all, whatever it matches.
      expect((await get('/v1/facets?filter=-type:nothing')).status).toBe(200)
    } finally {
      await store.close()
    }
  })
})
