import { expect, it } from 'vitest'
import { entityCollectionDocumentSchema, entityDocumentSchema } from '../../src/contract/schemas.js'
import { ATTRIBUTE_FIELDS } from '../../src/contract/fields.js'
import { DEMO_RECORDS, useDemoRegistry } from '../support/demo.js'
import { expectError, readDocument } from '../support/documents.js'
import { describeEachStore, storeDialects } from '../stores/each-store.js'

const canonicalDemoIds = DEMO_RECORDS.map((record) => record.id).sort()

describeEachStore(storeDialects, 'entities', (dialect) => {
  const { store, get } = useDemoRegistry(dialect)

  it('lists the 19 bills with filter=type:legislation', async () => {
    const response = await get('/v1/entities?filter=type:legislation')
    expect(response.status).toBe(200)
    const document = await readDocument(response, entityCollectionDocumentSchema)
    expect(document.data).toHaveLength(19)
    expect(document.data.every((entity) => entity.type === 'legislation')).toBe(true)
    expect(document.links.next).toBeUndefined()
    expect(document.meta.cursor).toBe(document.data.at(-1)!.id)
  })

  it('visits every canonical entity exactly once, in id order, following links.next', async () => {
    const seen: string[] = []
    let next: string | undefined = '/v1/entities?page[limit]=7'
    let pages = 0
    while (next) {
      const response = await get(next)
      const document = await readDocument(response, entityCollectionDocumentSchema)
      expect(document.data.length).toBeLessThanOrEqual(7)
      seen.push(...document.data.map((entity) => entity.id))
      if (document.links.next) {
        expect(document.links.next).toMatch(/^http:\/\/registry\.test\/v1\/entities\?page%5Bafter%5D=[0-9a-z]+&page%5Blimit%5D=7$/)
        expect(response.headers.get('link')).toBe(`<${document.links.next}>; rel="next"`)
      }
      next = document.links.next
      pages++
    }
    expect(pages).toBe(Math.ceil(canonicalDemoIds.length / 7))
    expect(seen).toEqual(canonicalDemoIds)
  })

  it('never exposes a key outside the field contract', async () => {
    const document = await readDocument(await get('/v1/entities?filter=type:person&page[limit]=100'), entityCollectionDocumentSchema)
    expect(document.data.length).toBe(100)
    for (const entity of document.data) {
      expect(Object.keys(entity.attributes).every((key) => key === 'texts' || (ATTRIBUTE_FIELDS as readonly string[]).includes(key))).toBe(true)
      expect(JSON.stringify(entity)).not.toContain('party')
    }
  })

  it('serves one entity with texts, public ids and absolute rendition links', async () => {
    const response = await get('/v1/entities/hr3590111')
    const document = await readDocument(response, entityDocumentSchema)
    expect(document.links.self).toBe('http://registry.test/v1/entities/hr3590111')
    expect(document.data).toMatchObject({ type: 'legislation', id: 'hr3590111', attributes: { localType: 'bill', jurisdiction: 'US' } })
    const [rendition] = document.data.attributes.texts![0]!.renditions
    expect(rendition!.links.content).toBe(`http://registry.test/v1/entities/hr3590111/renditions/${rendition!.renditionId}.html`)
    expect(JSON.stringify(document)).not.toContain('"file"')
  })

  it('combines qualifiers: equality, OR, contains, ranges and negation', async () => {
    const ids = async (filter: string) =>
      (await readDocument(await get(`/v1/entities?filter=${encodeURIComponent(filter)}`), entityCollectionDocumentSchema)).data.map((e) => e.id)
    const expected = (predicate: (record: (typeof DEMO_RECORDS)[number]) => boolean) =>
      DEMO_RECORDS.filter(predicate).map((record) => record.id).sort().slice(0, 100)
    const field = (record: (typeof DEMO_RECORDS)[number], name: string) => record[name] as string | undefined

    expect(await ids('type:person jurisdiction:US-WA')).toEqual(expected((r) => r.type === 'person' && r.jurisdiction === 'US-WA'))
    expect(await ids('jurisdiction:US-WA,US-OR')).toEqual(expected((r) => r.jurisdiction === 'US-WA' || r.jurisdiction === 'US-OR'))
    expect(await ids('title:~appropriations')).toEqual(expected((r) => (field(r, 'title') ?? '').toLowerCase().includes('appropriations')))
    expect(await ids('displayDate:2009..2010-12-31 type:legislation')).toEqual(
      expected((r) => r.type === 'legislation' && (field(r, 'displayDate') ?? '') >= '2009' && (field(r, 'displayDate') ?? '') <= '2010-12-31'),
    )
    expect(await ids('displayDate:>=2011 type:legislation')).toEqual(expected((r) => r.type === 'legislation' && (field(r, 'displayDate') ?? '') >= '2011'))
    // Persons without a displayDate still match the negation of a displayDate qualifier.
    expect(await ids('-displayDate:<1990 type:person')).toEqual(
      expected((r) => r.type === 'person' && !(field(r, 'displayDate') !== undefined && field(r, 'displayDate')! < '1990')),
    )
  })

  it('answers HEAD with the headers of GET and no body', async () => {
    const response = await get('/v1/entities?page[limit]=2', { method: 'HEAD' })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('application/vnd.api+json')
    expect(Number(response.headers.get('content-length'))).toBeGreaterThan(100)
    expect(await response.text()).toBe('')
  })

  it('follows merges up to five hops, answers tombstones, hides drained entities', async () => {
    const warehouse = store().warehouse
    const chain = ['mchain1', 'mchain2', 'mchain3', 'mchain4', 'mchain5', 'mchain6', 'mchain7']
    for (const id of chain) await warehouse.upsert({ id, type: 'person', name: `Person ${id}` })
    for (let index = 0; index < 6; index++) await warehouse.merge(chain[index]!, chain[index + 1]!)

    // A into B, B into C: A answers C, with Content-Location naming C.
    const viaOneHop = await get('/v1/entities/mchain6')
    expect(viaOneHop.headers.get('content-location')).toBe('http://registry.test/v1/entities/mchain7')
    const merged = await readDocument(viaOneHop, entityDocumentSchema)
    expect(merged.data.id).toBe('mchain7')
    expect((await readDocument(await get('/v1/entities/mchain5'), entityDocumentSchema)).data.id).toBe('mchain7')
    // Five hops still resolve; six do not.
    expect((await readDocument(await get('/v1/entities/mchain2'), entityDocumentSchema)).data.id).toBe('mchain7')
    await expectError(await get('/v1/entities/mchain1'), 404, 'not_found')

    await warehouse.upsert({ id: 'tombstone1', type: 'person', name: 'Gone' })
    await warehouse.delete('tombstone1')
    const tombstone = await readDocument(await get('/v1/entities/tombstone1'), entityDocumentSchema)
    expect(tombstone.data).toEqual({ type: 'entity', id: 'tombstone1', attributes: { texts: [] }, links: { self: 'http://registry.test/v1/entities/tombstone1' } })

    await warehouse.upsert({ id: 'drained1', type: 'person', name: 'Withdrawn' })
    await warehouse.drain('drained1')
    await expectError(await get('/v1/entities/drained1'), 404, 'not_found')

    const listed = await readDocument(await get('/v1/entities?filter=name:~person,gone,withdrawn'), entityCollectionDocumentSchema)
    expect(listed.data.map((entity) => entity.id)).toEqual(['mchain7'])
  })
})
