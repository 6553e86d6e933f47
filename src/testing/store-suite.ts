import assert from 'node:assert/strict'
import type { StoredChange, StoredEntity } from '../contract/entity.js'
import { followMerges } from '../contract/merges.js'
import { renderEntityResource } from '../contract/resource-json.js'
import { parseGffs } from '../gffs/parse.js'
import { createApiKeyAuthenticator } from '../auth/api-keys.js'
import { createKeyManager } from '../auth/key-manager.js'
import type { StoredApiKey } from '../ports/auth.js'
import type { RegistryStore } from '../ports/store.js'
import type { EntityRecord } from '../ports/warehouse.js'
import { normalizeRecord } from '../warehouse/record.js'
import { equal, hasFields, refused } from './assertions.js'
import type { TestRunner } from './runner.js'

const qualifiers = (filter: string) => parseGffs(filter, { allowFreeText: false }).qualifiers

/**
 * The store conformance kit: every behaviour the registry relies on from a store (warehouse rules,
 * filters, keyset pages, merges, tombstones, drains, change records, API keys), as cases for your
 * test runner. `makeStore` must give a fresh, empty store each time; the kit closes it after each
 * case. The bundled memory, SQLite, PGlite and PostgreSQL stores run these same cases.
 *
 * ```ts
 * import { describe, it, beforeEach, afterEach } from 'vitest'
 * import { describeEntityStore } from 'entity-registry/testing'
 * describeEntityStore('my store', () => createMyStore(), { describe, it, beforeEach, afterEach })
 * ```
 */
export function describeEntityStore(name: string, makeStore: () => Promise<RegistryStore> | RegistryStore, runner: TestRunner): void {
  const { describe, it, beforeEach, afterEach } = runner
  let current: RegistryStore | undefined
  const store = () => {
    assert.ok(current, 'the store exists only inside a case')
    return current
  }

  const listIds = async (filter = '') =>
    (await store().listEntities({ qualifiers: qualifiers(filter), after: null, limit: 100 })).entities.map((entity) => entity.id)
  /** The entity's fields; a resource the store keeps must be the one `renderEntityResource` renders. */
  const entityOf = async (id: string) => {
    const entity = await store().getEntity(id)
    if (entity === null) return null
    const { resource, ...fields } = entity
    if (resource !== undefined) equal(resource, renderEntityResource(fields))
    return fields
  }
  const changesOf = async (filter = '') =>
    (await store().listChanges({ qualifiers: qualifiers(filter), after: null, limit: 100, window: 1000 })).changes

  describe(name, () => {
    beforeEach(async () => {
      current = await makeStore()
    })
    afterEach(async () => {
      await current?.close()
      current = undefined
    })

    describe('warehouse', () => {
      it('creates, updates, and skips an upsert that changes nothing', async () => {
        const { warehouse } = store()
        const record: EntityRecord = { id: 'p1', type: 'person', name: 'Ada', secret: 'kept private' }
        equal(await warehouse.upsert(record), { changeType: 'create', entityId: 'p1', changedKeys: ['type', 'name'] })
        equal(await warehouse.upsert(record), null)
        equal(await warehouse.upsert({ ...record, secret: 'changed, still private' }), null)
        equal(await warehouse.upsert({ ...record, name: 'Ada L.', title: 'Countess' }), {
          changeType: 'update',
          entityId: 'p1',
          changedKeys: ['title', 'name'],
        })
        equal(await entityOf('p1'), {
          id: 'p1',
          state: 'canonical',
          mergedInto: null,
          snapshot: { texts: [], type: 'person', title: 'Countess', name: 'Ada L.' },
        })
        const changes = await changesOf()
        equal(
          changes.map((change) => change.changeType),
          ['create', 'update'],
        )
        equal(await store().feedHead(), changes[1]!.changeId)
      })

      it('keeps texts and renditions as normalized', async () => {
        const record: EntityRecord = {
          id: 'b1',
          type: 'bill',
          texts: [{ localUrl: 'https://example.org/b1', renditions: [{ conversion: 'original', mime: 'text/html', filename: 'b1.html' }] }],
        }
        equal((await store().warehouse.upsert(record))?.changedKeys, ['type', 'texts'])
        const expected = normalizeRecord(record).snapshot
        equal((await entityOf('b1'))?.snapshot, expected)
        equal((await changesOf())[0]?.snapshot, expected)
      })

      it('deletes to a tombstone and recreates', async () => {
        const { warehouse } = store()
        await warehouse.upsert({ id: 'p1', type: 'person', name: 'Ada' })
        equal(await warehouse.delete('p1'), { changeType: 'delete', entityId: 'p1', changedKeys: ['type', 'name'] })
        equal(await warehouse.delete('p1'), null)
        equal(await entityOf('p1'), { id: 'p1', state: 'deleted', mergedInto: null, snapshot: { texts: [] } })
        equal(await listIds(), [])
        equal((await warehouse.upsert({ id: 'p1', type: 'person' }))?.changeType, 'create')
        await refused(warehouse.delete('missing'), 'not_found')
      })

      it('drains, also a deleted entity', async () => {
        const { warehouse } = store()
        await warehouse.upsert({ id: 'p1', type: 'person' })
        await warehouse.upsert({ id: 'p2', type: 'person' })
        await warehouse.delete('p2')
        equal(await warehouse.drain('p1'), { changeType: 'delete', entityId: 'p1', changedKeys: ['type'] })
        equal(await warehouse.drain('p1'), null)
        equal(await warehouse.drain('p2'), { changeType: 'delete', entityId: 'p2', changedKeys: [] })
        equal((await entityOf('p1'))?.state, 'drained')
        equal(await listIds(), [])
      })

      it('merges into the canonical end of a chain and records the source snapshot', async () => {
        const { warehouse } = store()
        for (const id of ['a', 'b', 'c']) await warehouse.upsert({ id, type: 'person', name: id.toUpperCase() })
        equal(await warehouse.merge('a', 'b'), { changeType: 'merge', entityId: 'a', changedKeys: [] })
        equal(await warehouse.merge('a', 'b'), null)
        await warehouse.merge('b', 'c')
        equal(await entityOf('a'), { id: 'a', state: 'merged', mergedInto: 'b', snapshot: { texts: [], type: 'person', name: 'A' } })
        const merges = (await changesOf('type:person')).filter((change) => change.changeType === 'merge')
        equal(
          merges.map(({ entityId, mergedInto, snapshot }) => ({ entityId, mergedInto, name: snapshot.name })),
          [
            { entityId: 'a', mergedInto: 'b', name: 'A' },
            { entityId: 'b', mergedInto: 'c', name: 'B' },
          ],
        )
        equal(await listIds(), ['c'])
        // An upsert of a merged id makes it canonical again.
        equal((await warehouse.upsert({ id: 'a', type: 'person' }))?.changeType, 'create')
        hasFields(await entityOf('a'), { state: 'canonical', mergedInto: null })
      })

      it('refuses merges into itself, missing or withdrawn targets, and cycles', async () => {
        const { warehouse } = store()
        for (const id of ['a', 'b', 'd', 'x']) await warehouse.upsert({ id, type: 'person' })
        await warehouse.delete('d')
        await warehouse.drain('x')
        await warehouse.merge('a', 'b')
        await refused(warehouse.merge('b', 'b'), 'invalid_merge')
        await refused(warehouse.merge('b', 'missing'), 'not_found')
        await refused(warehouse.merge('missing', 'b'), 'not_found')
        await refused(warehouse.merge('b', 'd'), 'invalid_merge')
        await refused(warehouse.merge('b', 'x'), 'invalid_merge')
        await refused(warehouse.merge('b', 'a'), 'invalid_merge')
        equal((await changesOf()).filter((change) => change.changeType === 'merge').length, 1)
      })

      it('follows at most five merge hops', async () => {
        const { warehouse } = store()
        const ids = ['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7']
        for (const id of ids) await warehouse.upsert({ id, type: 'person' })
        for (let index = 1; index <= 6; index++) equal((await warehouse.merge(ids[index]!, ids[index - 1]!))?.changeType, 'merge')
        await refused(warehouse.merge('c7', 'c6'), 'invalid_merge')
        hasFields((await changesOf()).at(-1), { entityId: 'c6', mergedInto: 'c0' })
      })

      it('applies a batch: a refused operation writes nothing, the rest apply', async () => {
        const results = await store().warehouse.apply([
          { op: 'upsert', record: { id: 'a', type: 'person' } },
          { op: 'merge', id: 'a', into: 'missing' },
          { op: 'upsert', record: { id: 'BAD', type: 'person' } },
          { op: 'upsert', record: { id: 'b', type: 'bill' } },
        ])
        equal(
          results.map((result) => (result.ok ? result.change?.changeType : result.error.code)),
          ['create', 'not_found', 'invalid_record', 'create'],
        )
        equal(await listIds(), ['a', 'b'])
        equal((await changesOf()).length, 2)
      })
    })

    describe('listEntities', () => {
      it('lists canonical entities in id order with keyset pages', async () => {
        for (const id of ['b2', '10', 'a', '9', 'z', 'a0', '1']) await store().warehouse.upsert({ id, type: 'thing' })
        await store().warehouse.delete('z')
        equal(await allPages(store(), []), ['1', '10', '9', 'a', 'a0', 'b2'])
        const first = await store().listEntities({ qualifiers: [], after: null, limit: 2 })
        equal([first.entities.map((entity) => entity.id), first.hasMore], [['1', '10'], true])
        const tail = await store().listEntities({ qualifiers: [], after: 'b2', limit: 2 })
        equal([tail.entities, tail.hasMore], [[], false])
      })

      it('pages through a filter', async () => {
        for (const [id, type] of [['a', 'person'], ['b', 'bill'], ['c', 'person'], ['d', 'person']] as const) {
          await store().warehouse.upsert({ id, type })
        }
        equal(await allPages(store(), qualifiers('type:person'), 2), ['a', 'c', 'd'])
      })
    })

    describe('getEntities', () => {
      it('reads the entities of many ids at once, in any state, leaving out ids that never existed', async () => {
        const read = store().getEntities?.bind(store())
        // Optional: a store without it is read one id at a time.
        if (read === undefined) return
        for (const id of ['a', 'b', 'c', 'd']) await store().warehouse.upsert({ id, type: 'person', name: id.toUpperCase() })
        await store().warehouse.merge('b', 'c')
        await store().warehouse.delete('d')
        const entities = await read(['d', 'missing', 'a', 'b', 'c'])
        const byId = Object.fromEntries(entities.map(({ id, state, mergedInto, snapshot }) => [id, { state, mergedInto, name: snapshot.name }]))
        equal(byId, {
          a: { state: 'canonical', mergedInto: null, name: 'A' },
          b: { state: 'merged', mergedInto: 'c', name: 'B' },
          c: { state: 'canonical', mergedInto: null, name: 'C' },
          d: { state: 'deleted', mergedInto: null, name: undefined },
        })
        for (const entity of entities) equal(entity, await store().getEntity(entity.id))
        equal(await read([]), [])
      })
    })

    describe('getMergeEnd', () => {
      it('ends where followMerges ends from the entity: itself, a chain of up to five hops, or none', async () => {
        const read = store().getMergeEnd?.bind(store())
        // Optional: without it, a get follows merges one getEntity a hop.
        if (read === undefined) return
        const { warehouse } = store()
        const ids = ['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'd0', 'd1', 'x0', 'x1', 'a']
        for (const id of ids) await warehouse.upsert({ id, type: 'person', name: id.toUpperCase() })
        // c6 → c5 → … → c0: six hops from c6, one too many.
        for (let index = 1; index <= 6; index++) await warehouse.merge(`c${index}`, `c${index - 1}`)
        await warehouse.merge('d1', 'd0')
        await warehouse.delete('d0')
        await warehouse.merge('x1', 'x0')
        await warehouse.drain('x0')
        const expected = async (id: string) => (await followMerges(await store().getEntity(id), (next) => store().getEntity(next))).end
        const asked = [...ids, 'missing']
        const ends: (StoredEntity | null)[] = []
        for (const id of asked) {
          ends.push(await expected(id))
          equal(await read(id), ends.at(-1), id)
        }
        // Asked together (a store may read them in one statement), the same, a repeated id included.
        equal(await Promise.all([...asked, 'c3', 'c6'].map((id) => read(id))), [...ends, ends[3]!, ends[6]!])
        equal((await read('c1'))?.id, 'c0')
        equal((await read('c5'))?.id, 'c0')
        equal(await read('c6'), null)
        hasFields(await read('d1'), { id: 'd0', state: 'deleted' })
        hasFields(await read('x1'), { id: 'x0', state: 'drained' })
        equal(await read('missing'), null)
      })
    })

    describe('countFacets', () => {
      const write = async () => {
        for (const [id, type, jurisdiction, status] of [
          ['a', 'person', 'US-WA', 'current'],
          ['b', 'person', 'US-WA', 'former'],
          ['c', 'person', 'US-OR', undefined],
          ['d', 'bill', 'US-WA', 'enacted'],
          ['e', 'bill', 'US', undefined],
          ['f', 'person', 'US-OR', 'current'],
          ['g', 'committee', 'US', undefined],
        ] as const) {
          await store().warehouse.upsert({ id, type, jurisdiction, ...(status === undefined ? {} : { status }) })
        }
        // Neither a merged-away nor a deleted entity counts.
        await store().warehouse.merge('g', 'e')
        await store().warehouse.delete('f')
      }

      it('counts the canonical entities a filter matches by value, most frequent first, then by value', async () => {
        await write()
        const counts = await store().countFacets({ qualifiers: [], fields: ['type', 'jurisdiction', 'status'], limit: 50 })
        equal(counts, {
          total: 5,
          facets: {
            type: [
              { value: 'person', count: 3 },
              { value: 'bill', count: 2 },
            ],
            jurisdiction: [
              { value: 'US-WA', count: 3 },
              { value: 'US', count: 1 },
              { value: 'US-OR', count: 1 },
            ],
            // An entity without the field counts in the total only.
            status: [
              { value: 'current', count: 1 },
              { value: 'enacted', count: 1 },
              { value: 'former', count: 1 },
            ],
          },
          feedHead: await store().feedHead(),
        })
      })

      it('counts what the list pages of the same filter hold, each field cut at the limit', async () => {
        await write()
        const filter = qualifiers('type:person -status:former')
        const counts = await store().countFacets({ qualifiers: filter, fields: ['jurisdiction', 'type'], limit: 1 })
        equal(counts.total, (await allPages(store(), filter)).length)
        equal(counts.facets, { jurisdiction: [{ value: 'US-OR', count: 1 }], type: [{ value: 'person', count: 2 }] })
        equal(await store().countFacets({ qualifiers: qualifiers('type:nothing'), fields: ['type'], limit: 50 }), {
          total: 0,
          facets: { type: [] },
          feedHead: await store().feedHead(),
        })
      })
    })

    describe('countFacets after every kind of write', () => {
      it('counts as many as the list pages hold, whatever the filter', async () => {
        const types = ['person', 'bill', 'committee']
        const statuses = ['current', 'former', undefined]
        // Creates, changes of type, status and jurisdiction, merges, deletes and drains, in a fixed order.
        for (let round = 0; round < 3; round++) {
          for (let index = 0; index < 12; index++) {
            const status = statuses[(index + round) % 3]
            await store().warehouse.upsert({ id: `e${index}`, type: types[(index * (round + 1)) % 3]!, jurisdiction: `US-${index % 4}`, name: `name ${index}`, ...(status ? { status } : {}) })
          }
          await store().warehouse.merge(`e${round}`, `e${round + 6}`)
          await store().warehouse.delete(`e${round + 3}`)
          await store().warehouse.drain(`e${round + 9}`)
        }
        // One batch touching entities several times: a store that writes a batch at its end counts it right too.
        await store().warehouse.apply([
          { op: 'upsert', record: { id: 'e7', type: 'bill', status: 'former' } },
          { op: 'upsert', record: { id: 'b1', type: 'person', jurisdiction: 'US-1' } },
          { op: 'upsert', record: { id: 'e7', type: 'person', jurisdiction: 'US-2' } },
          { op: 'merge', id: 'b1', into: 'e7' },
          { op: 'upsert', record: { id: 'b2', type: 'committee' } },
          { op: 'delete', id: 'b2' },
        ])
        for (const filter of ['', 'type:person', 'status:former -type:bill', 'jurisdiction:US-1,US-2', 'jurisdiction:~us-3', 'name:~"name 1"', 'type:bill name:~name']) {
          const listed = await allPages(store(), qualifiers(filter))
          const counts = await store().countFacets({ qualifiers: qualifiers(filter), fields: ['type', 'status'], limit: 50 })
          equal(counts.total, listed.length, `total for "${filter}"`)
          const sum = (values: { count: number }[] | undefined) => (values ?? []).reduce((total, { count }) => total + count, 0)
          equal(sum(counts.facets.type), listed.length, `types for "${filter}"`)
        }
      })
    })

    describe('qualifiers', () => {
      const entities: EntityRecord[] = [
        { id: 'p1', type: 'person', name: 'Ada Lovelace', jurisdiction: 'US-WA', displayDate: '2020-05-01', status: 'active' },
        { id: 'p2', type: 'person', name: 'ÄNNE Öberg', jurisdiction: 'US-CA', displayDate: '2021-01-01' },
        { id: 'b1', type: 'bill', title: 'Tax 100% relief_act', jurisdiction: 'US-WA', displayDate: '2019-12-31' },
        { id: 'x1', title: 'loose' },
      ]
      const cases: [string, string[]][] = [
        ['', ['b1', 'p1', 'p2', 'x1']],
        ['type:person', ['p1', 'p2']],
        ['type:person,bill', ['b1', 'p1', 'p2']],
        ['type:Person', []],
        ['-type:person', ['b1', 'x1']],
        ['-jurisdiction:US-CA', ['b1', 'p1', 'x1']],
        ['-jurisdiction:US-CA,US-WA', ['x1']],
        ['name:~änne', ['p2']],
        ['name:~LOVE,öBERG', ['p1', 'p2']],
        ['-title:~tax', ['p1', 'p2', 'x1']],
        ['title:~100%', ['b1']],
        ['title:~%', ['b1']],
        ['title:~_', ['b1']],
        ['title:~"100% RELIEF"', ['b1']],
        ['displayDate:>2020-05-01', ['p2']],
        ['displayDate:>=2020-05-01', ['p1', 'p2']],
        ['displayDate:<2020', ['b1']],
        ['displayDate:<=2020-05-01', ['b1', 'p1']],
        ['-displayDate:<2021', ['p2', 'x1']],
        ['displayDate:2020..2020-12-31', ['p1']],
        ['displayDate:*..2020', ['b1']],
        ['displayDate:2021..*', ['p2']],
        ['displayDate:*..*', ['b1', 'p1', 'p2']],
        ['-displayDate:*..*', ['x1']],
        ['displayDate:>=2020 displayDate:<2021', ['p1']],
        ['type:person jurisdiction:US-WA', ['p1']],
        ['-status:active type:person', ['p2']],
        // Code point order: lower case sorts after upper case, and "Ä" after both.
        ['title:>Z', ['x1']],
        ['name:>Z', ['p2']],
        ['name:<b', ['p1']],
      ]
      for (const [filter, expected] of cases) {
        it(`filter ${JSON.stringify(filter)}`, async () => {
          for (const entity of entities) await store().warehouse.upsert(entity)
          equal(await allPages(store(), qualifiers(filter)), expected)
        })
      }
    })

    describe('listChanges', () => {
      const page = async (filter: string, after: string | null, limit: number, window: number) => {
        const { changes, cursor, hasMore } = await store().listChanges({ qualifiers: qualifiers(filter), after, limit, window })
        return { ids: changes.map((change) => change.changeId), cursor, hasMore }
      }

      /** Feed: 1 create p1, 2 create b1, 3 create p2, 4 update b1, 5 delete p1; returns the five ids. */
      async function writeFeed(): Promise<string[]> {
        const { warehouse } = store()
        await warehouse.upsert({ id: 'p1', type: 'person' })
        await warehouse.upsert({ id: 'b1', type: 'bill' })
        await warehouse.upsert({ id: 'p2', type: 'person' })
        await warehouse.upsert({ id: 'b1', type: 'bill', title: 'Act' })
        await warehouse.delete('p1')
        const ids = (await changesOf()).map((change) => change.changeId)
        equal(ids.length, 5)
        equal([...ids].sort(), ids, 'change ids sort in feed order')
        return ids
      }

      it('is empty before the first change', async () => {
        equal(await store().feedHead(), null)
        equal(await page('', null, 10, 100), { ids: [], cursor: null, hasMore: false })
      })

      it('returns the whole feed with its fields', async () => {
        const ids = await writeFeed()
        const changes: StoredChange[] = await changesOf()
        equal(
          changes.map(({ entityId, changeType, changedKeys, mergedInto }) => [entityId, changeType, changedKeys, mergedInto]),
          [
            ['p1', 'create', ['type'], null],
            ['b1', 'create', ['type'], null],
            ['p2', 'create', ['type'], null],
            ['b1', 'update', ['title'], null],
            ['p1', 'delete', ['type'], null],
          ],
        )
        for (const change of changes) assert.ok(!Number.isNaN(Date.parse(change.recordedAt)), `recordedAt ${change.recordedAt}`)
        equal(changes[3]?.snapshot, { texts: [], type: 'bill', title: 'Act' })
        equal(changes[4]?.snapshot, { texts: [] })
        equal(await store().feedHead(), ids[4])
        equal(store().isChangeId(ids[0]!), true)
        equal(store().isChangeId('not a change id!'), false)
      })

      it('ends a full page at its last match and an unfilled one at the end of the window', async () => {
        const ids = await writeFeed()
        equal(await page('type:person', null, 1, 100), { ids: [ids[0]], cursor: ids[0], hasMore: true })
        equal(await page('type:person', ids[0]!, 1, 100), { ids: [ids[2]], cursor: ids[2], hasMore: true })
        // The tombstone of p1 matches no type filter; the cursor still advances to the head.
        equal(await page('type:person', ids[2]!, 1, 100), { ids: [], cursor: ids[4], hasMore: false })
        equal(await page('type:person', ids[4]!, 1, 100), { ids: [], cursor: ids[4], hasMore: false })
      })

      it('scans at most the window', async () => {
        const ids = await writeFeed()
        equal(await page('type:person', null, 10, 2), { ids: [ids[0]], cursor: ids[1], hasMore: true })
        equal(await page('type:bill', ids[1]!, 10, 2), { ids: [ids[3]], cursor: ids[3], hasMore: true })
        equal(await page('title:Act', ids[3]!, 10, 2), { ids: [], cursor: ids[4], hasMore: false })
        equal(await page('', null, 2, 3), { ids: [ids[0], ids[1]], cursor: ids[1], hasMore: true })
      })
    })

    describe('api keys', () => {
      const key = (id: string, org: string, createdAt: string): StoredApiKey & { hash: string } => ({
        hash: id.padEnd(64, '0'),
        id,
        org,
        label: null,
        createdAt,
        expiresAt: null,
        lastUsedAt: null,
        revokedAt: null,
      })

      it('adds keys by hash with their organizations, and refuses a second key with the same hash or id', async () => {
        equal(await store().countApiKeys(), 0)
        equal(await store().addApiKey({ ...key('k1', 'acme', '2026-01-02T00:00:00.000Z'), label: 'ci', expiresAt: '2027-01-01T00:00:00.000Z' }), true)
        equal(await store().addApiKey(key('k1', 'acme', '2026-01-03T00:00:00.000Z')), false)
        equal(await store().addApiKey({ ...key('k2', 'acme', '2026-01-03T00:00:00.000Z'), hash: 'k1'.padEnd(64, '0') }), false)
        equal(await store().addApiKey(key('k3', 'zeta', '2026-01-01T00:00:00.000Z')), true)
        equal(await store().countApiKeys(), 2)
        equal(await store().findApiKey('k1'.padEnd(64, '0')), {
          id: 'k1',
          org: 'acme',
          label: 'ci',
          createdAt: '2026-01-02T00:00:00.000Z',
          expiresAt: '2027-01-01T00:00:00.000Z',
          lastUsedAt: null,
          revokedAt: null,
        })
        equal(await store().findApiKey('f'.repeat(64)), null)
        // An organization is created with its first key, and keeps that time.
        equal(await store().listOrganizations(), [
          { name: 'acme', createdAt: '2026-01-02T00:00:00.000Z' },
          { name: 'zeta', createdAt: '2026-01-01T00:00:00.000Z' },
        ])
      })

      it('lists keys by organization, creation time and id, of one organization when asked', async () => {
        await store().addApiKey(key('kb', 'zeta', '2026-01-01T00:00:00.000Z'))
        await store().addApiKey(key('kc', 'acme', '2026-01-02T00:00:00.000Z'))
        await store().addApiKey(key('ka', 'acme', '2026-01-02T00:00:00.000Z'))
        await store().addApiKey(key('kd', 'acme', '2026-01-01T00:00:00.000Z'))
        equal((await store().listApiKeys()).map((stored) => stored.id), ['kd', 'ka', 'kc', 'kb'])
        equal((await store().listApiKeys({ org: 'zeta' })).map((stored) => stored.id), ['kb'])
        equal(await store().listApiKeys({ org: 'nobody' }), [])
      })

      it('revokes a key by id or an organization\'s keys, each once, keeping the first time', async () => {
        for (const id of ['k1', 'k2']) await store().addApiKey(key(id, 'acme', '2026-01-01T00:00:00.000Z'))
        await store().addApiKey(key('k3', 'zeta', '2026-01-01T00:00:00.000Z'))
        equal(await store().revokeApiKeys({ id: 'k1' }, '2026-02-01T00:00:00.000Z'), ['k1'])
        equal(await store().revokeApiKeys({ id: 'k1' }, '2026-03-01T00:00:00.000Z'), [])
        equal(await store().revokeApiKeys({ id: 'unknown' }, '2026-03-01T00:00:00.000Z'), [])
        equal(await store().revokeApiKeys({ org: 'acme' }, '2026-03-01T00:00:00.000Z'), ['k2'])
        const revoked = Object.fromEntries((await store().listApiKeys()).map((stored) => [stored.id, stored.revokedAt]))
        equal(revoked, { k1: '2026-02-01T00:00:00.000Z', k2: '2026-03-01T00:00:00.000Z', k3: null })
      })

      it('lists the hashes of the keys not revoked, when it offers listApiKeyHashes', async () => {
        const list = store().listApiKeyHashes?.bind(store())
        if (list === undefined) return
        equal(await list(), [])
        for (const id of ['k1', 'k2', 'k3']) await store().addApiKey(key(id, 'acme', '2026-01-01T00:00:00.000Z'))
        await store().revokeApiKeys({ id: 'k2' }, '2026-02-01T00:00:00.000Z')
        equal((await list()).sort(), ['k1'.padEnd(64, '0'), 'k3'.padEnd(64, '0')])
      })

      it('records a key\'s last use, never moving it back', async () => {
        await store().addApiKey(key('k1', 'acme', '2026-01-01T00:00:00.000Z'))
        await store().addApiKey(key('k2', 'acme', '2026-01-01T00:00:00.000Z'))
        await store().recordApiKeyUse([{ id: 'k1', usedAt: '2026-01-05T00:00:00.000Z' }])
        await store().recordApiKeyUse([
          { id: 'k1', usedAt: '2026-01-04T00:00:00.000Z' },
          { id: 'k2', usedAt: '2026-01-06T00:00:00.000Z' },
          { id: 'unknown', usedAt: '2026-01-06T00:00:00.000Z' },
        ])
        const used = Object.fromEntries((await store().listApiKeys()).map((stored) => [stored.id, stored.lastUsedAt]))
        equal(used, { k1: '2026-01-05T00:00:00.000Z', k2: '2026-01-06T00:00:00.000Z' })
      })

      it('serves the key lifecycle: a created key authenticates until revoked or expired, and its use is recorded', async () => {
        let time = Date.parse('2026-01-01T00:00:00.000Z')
        const manager = createKeyManager(store(), { now: () => new Date(time) })
        const auth = createApiKeyAuthenticator({ store: store(), cacheTtlMs: 0, now: () => time })
        const view = { method: 'GET', url: 'http://localhost/v1/entities', headers: new Headers() }
        const { key: ci, apiKey } = await manager.createKey({ org: 'acme', label: 'ci', expiresAt: new Date(time + 60_000) })
        const { key: other } = await manager.createKey({ org: 'acme' })
        equal(apiKey, { id: ci.slice(0, 11), org: 'acme', label: 'ci', createdAt: '2026-01-01T00:00:00.000Z', expiresAt: '2026-01-01T00:01:00.000Z', lastUsedAt: null, state: 'active' })
        equal(await auth.authenticate(ci, view), { id: apiKey.id, org: 'acme' })
        await auth.flush()
        equal((await manager.listKeys({ org: 'acme' })).find((listed) => listed.id === apiKey.id)?.lastUsedAt, '2026-01-01T00:00:00.000Z')
        time += 60_000
        equal(await auth.authenticate(ci, view), null)
        const states = Object.fromEntries((await manager.listKeys()).map((listed) => [listed.id, listed.state]))
        equal(states, { [apiKey.id]: 'expired', [other.slice(0, 11)]: 'active' })
        equal((await manager.revokeOrganization('acme')).map((listed) => listed.state), ['revoked', 'revoked'])
        equal(await auth.authenticate(other, view), null)
        equal(await manager.listOrganizations(), [{ name: 'acme', createdAt: '2026-01-01T00:00:00.000Z', activeKeys: 0, keys: 2 }])
      })
    })
  })
}

/** Every id a filter lists, following the store's pages to the end. */
async function allPages(store: RegistryStore, filter: ReturnType<typeof qualifiers>, limit = 2): Promise<string[]> {
  const ids: string[] = []
  for (let after: string | null = null; ; ) {
    const page = await store.listEntities({ qualifiers: filter, after, limit })
    ids.push(...page.entities.map((entity) => entity.id))
    if (!page.hasMore) return ids
    // A store may end a page past its last entity (it checked further rows and found no match).
    after = page.cursor !== undefined ? page.cursor : page.entities.at(-1)!.id
  }
}
