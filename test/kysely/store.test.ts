import { expect, it } from 'vitest'
import { encodeChangeId } from '../../src/contract/change-id.js'
import { parseGffs } from '../../src/gffs/index.js'
import { WarehouseError, type EntityRecord } from '../../src/ports/warehouse.js'
import { normalizeRecord } from '../../src/warehouse/record.js'
import { describeStores, storeDialects, useStore, type TestStore } from './dialects.js'

const filter = (text: string) => parseGffs(text, { allowFreeText: false })

async function listIds(store: TestStore, text: string): Promise<string[]> {
  const page = await store.listEntities({ filter: filter(text), after: null, limit: 100 })
  return page.entities.map((entity) => entity.id)
}

async function changesOf(store: TestStore, text = '') {
  const page = await store.listChanges({ filter: filter(text), after: null, limit: 100, window: 1000 })
  return page.changes
}

async function rejection(operation: Promise<unknown>): Promise<WarehouseError> {
  const error = await operation.then(
    () => expect.unreachable('the operation was accepted'),
    (reason: unknown) => reason,
  )
  expect(error).toBeInstanceOf(WarehouseError)
  return error as WarehouseError
}

const changeId = encodeChangeId

describeStores(storeDialects, 'warehouse', (dialect) => {
  const store = useStore(dialect)

  it('creates, updates, and skips an upsert that changes nothing', async () => {
    const { warehouse } = store()
    const record: EntityRecord = { id: 'p1', type: 'person', name: 'Ada', secret: 'kept private' }
    expect(await warehouse.upsert(record)).toEqual({
      changeType: 'create',
      entityId: 'p1',
      changedKeys: ['type', 'name'],
    })
    expect(await warehouse.upsert(record)).toBeNull()
    expect(await warehouse.upsert({ ...record, secret: 'changed, still private' })).toBeNull()
    expect(await warehouse.upsert({ ...record, name: 'Ada L.', title: 'Countess' })).toEqual({
      changeType: 'update',
      entityId: 'p1',
      changedKeys: ['title', 'name'],
    })
    expect(await store().getEntity('p1')).toEqual({
      id: 'p1',
      state: 'canonical',
      mergedInto: null,
      snapshot: { texts: [], type: 'person', title: 'Countess', name: 'Ada L.' },
    })
    expect((await changesOf(store())).map((change) => change.changeType)).toEqual(['create', 'update'])
    expect(await store().feedHead()).toBe(changeId(2))
  })

  it('keeps texts and renditions as normalized', async () => {
    const record: EntityRecord = {
      id: 'b1',
      type: 'bill',
      texts: [
        {
          localUrl: 'https://example.org/b1',
          renditions: [{ conversion: 'original', mime: 'text/html', filename: 'b1.html' }],
        },
      ],
    }
    expect((await store().warehouse.upsert(record))?.changedKeys).toEqual(['type', 'texts'])
    const expected = normalizeRecord(record).snapshot
    expect((await store().getEntity('b1'))?.snapshot).toEqual(expected)
    expect((await changesOf(store()))[0]?.snapshot).toEqual(expected)
  })

  it('deletes to a tombstone and recreates', async () => {
    const { warehouse } = store()
    await warehouse.upsert({ id: 'p1', type: 'person', name: 'Ada' })
    expect(await warehouse.delete('p1')).toEqual({
      changeType: 'delete',
      entityId: 'p1',
      changedKeys: ['type', 'name'],
    })
    expect(await warehouse.delete('p1')).toBeNull()
    expect(await store().getEntity('p1')).toEqual({
      id: 'p1',
      state: 'deleted',
      mergedInto: null,
      snapshot: { texts: [] },
    })
    expect(await listIds(store(), '')).toEqual([])
    expect((await warehouse.upsert({ id: 'p1', type: 'person' }))?.changeType).toBe('create')
    expect((await rejection(warehouse.delete('missing'))).code).toBe('not_found')
  })

  it('drains, also a deleted entity', async () => {
    const { warehouse } = store()
    await warehouse.upsert({ id: 'p1', type: 'person' })
    await warehouse.upsert({ id: 'p2', type: 'person' })
    await warehouse.delete('p2')
    expect(await warehouse.drain('p1')).toEqual({ changeType: 'delete', entityId: 'p1', changedKeys: ['type'] })
    expect(await warehouse.drain('p1')).toBeNull()
    expect(await warehouse.drain('p2')).toEqual({ changeType: 'delete', entityId: 'p2', changedKeys: [] })
    expect((await store().getEntity('p1'))?.state).toBe('drained')
    expect(await listIds(store(), '')).toEqual([])
  })

  it('merges into the canonical end of a chain and records the source snapshot', async () => {
    const { warehouse } = store()
    for (const id of ['a', 'b', 'c']) await warehouse.upsert({ id, type: 'person', name: id.toUpperCase() })
    expect(await warehouse.merge('a', 'b')).toEqual({ changeType: 'merge', entityId: 'a', changedKeys: [] })
    expect(await warehouse.merge('a', 'b')).toBeNull()
    await warehouse.merge('b', 'c')
    expect(await store().getEntity('a')).toEqual({
      id: 'a',
      state: 'merged',
      mergedInto: 'b',
      snapshot: { texts: [], type: 'person', name: 'A' },
    })
    const merges = (await changesOf(store(), 'type:person')).filter((change) => change.changeType === 'merge')
    expect(merges.map(({ entityId, mergedInto, snapshot }) => ({ entityId, mergedInto, name: snapshot.name }))).toEqual(
      [
        { entityId: 'a', mergedInto: 'b', name: 'A' },
        { entityId: 'b', mergedInto: 'c', name: 'B' },
      ],
    )
    expect(await listIds(store(), '')).toEqual(['c'])
    // An upsert of a merged id makes it canonical again.
    expect((await warehouse.upsert({ id: 'a', type: 'person' }))?.changeType).toBe('create')
    expect(await store().getEntity('a')).toMatchObject({ state: 'canonical', mergedInto: null })
  })

  it('rejects merges into itself, missing or withdrawn targets, and cycles', async () => {
    const { warehouse } = store()
    for (const id of ['a', 'b', 'd', 'x']) await warehouse.upsert({ id, type: 'person' })
    await warehouse.delete('d')
    await warehouse.drain('x')
    await warehouse.merge('a', 'b')
    const codes = async (source: string, target: string) => (await rejection(warehouse.merge(source, target))).code
    expect(await codes('b', 'b')).toBe('invalid_merge')
    expect(await codes('b', 'missing')).toBe('not_found')
    expect(await codes('missing', 'b')).toBe('not_found')
    expect(await codes('b', 'd')).toBe('invalid_merge')
    expect(await codes('b', 'x')).toBe('invalid_merge')
    expect(await codes('b', 'a')).toBe('invalid_merge')
    expect((await changesOf(store())).filter((change) => change.changeType === 'merge')).toHaveLength(1)
  })

  it('follows at most five merge hops', async () => {
    const { warehouse } = store()
    const ids = ['c0', 'c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7']
    for (const id of ids) await warehouse.upsert({ id, type: 'person' })
    for (let index = 1; index <= 6; index++) {
      const change = await warehouse.merge(ids[index]!, ids[index - 1]!)
      expect(change?.changeType).toBe('merge')
    }
    expect((await rejection(warehouse.merge('c7', 'c6'))).code).toBe('invalid_merge')
    const lastMerge = (await changesOf(store())).at(-1)
    expect(lastMerge).toMatchObject({ entityId: 'c6', mergedInto: 'c0' })
  })

  it('applies a batch: a rejected operation writes nothing, the rest apply', async () => {
    const results = await store().warehouse.apply([
      { op: 'upsert', record: { id: 'a', type: 'person' } },
      { op: 'merge', id: 'a', into: 'missing' },
      { op: 'upsert', record: { id: 'BAD', type: 'person' } },
      { op: 'upsert', record: { id: 'b', type: 'bill' } },
    ])
    expect(results.map((result) => (result.ok ? result.change?.changeType : result.error.code))).toEqual([
      'create',
      'not_found',
      'invalid_record',
      'create',
    ])
    expect(await listIds(store(), '')).toEqual(['a', 'b'])
    expect(await store().feedHead()).toBe(changeId(2))
  })
})

describeStores(storeDialects, 'listEntities', (dialect) => {
  const store = useStore(dialect)

  it('lists canonical entities in id order with keyset pages', async () => {
    const ids = ['b2', '10', 'a', '9', 'z', 'a0', '1']
    for (const id of ids) await store().warehouse.upsert({ id, type: 'thing' })
    await store().warehouse.delete('z')
    const pages: { ids: string[]; hasMore: boolean }[] = []
    let after: string | null = null
    do {
      const page = await store().listEntities({ filter: null, after, limit: 2 })
      pages.push({ ids: page.entities.map((entity) => entity.id), hasMore: page.hasMore })
      after = page.hasMore ? page.entities.at(-1)!.id : null
    } while (after !== null)
    expect(pages).toEqual([
      { ids: ['1', '10'], hasMore: true },
      { ids: ['9', 'a'], hasMore: true },
      { ids: ['a0', 'b2'], hasMore: false },
    ])
    const tail = await store().listEntities({ filter: null, after: 'b2', limit: 2 })
    expect(tail).toEqual({ entities: [], hasMore: false })
  })

  it('pages through a filter', async () => {
    for (const [id, type] of [
      ['a', 'person'],
      ['b', 'bill'],
      ['c', 'person'],
      ['d', 'person'],
    ]) {
      await store().warehouse.upsert({ id: id!, type })
    }
    const first = await store().listEntities({ filter: filter('type:person'), after: null, limit: 2 })
    expect([first.entities.map((entity) => entity.id), first.hasMore]).toEqual([['a', 'c'], true])
    const second = await store().listEntities({ filter: filter('type:person'), after: 'c', limit: 2 })
    expect([second.entities.map((entity) => entity.id), second.hasMore]).toEqual([['d'], false])
  })
})

describeStores(storeDialects, 'qualifiers', (dialect) => {
  const store = useStore(dialect)
  const entities: EntityRecord[] = [
    {
      id: 'p1',
      type: 'person',
      name: 'Ada Lovelace',
      jurisdiction: 'US-WA',
      displayDate: '2020-05-01',
      status: 'active',
    },
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

  it.each(cases)('filter %j', async (text, expected) => {
    for (const entity of entities) await store().warehouse.upsert(entity)
    expect(await listIds(store(), text)).toEqual(expected)
  })
})

describeStores(storeDialects, 'listChanges', (dialect) => {
  const store = useStore(dialect)
  const page = (text: string, after: string | null, limit: number, window: number) =>
    store()
      .listChanges({ filter: filter(text), after, limit, window })
      .then(({ changes, cursor, hasMore }) => ({ seqs: changes.map((change) => change.changeId), cursor, hasMore }))

  // Feed: 1 create p1, 2 create b1, 3 create p2, 4 update b1, 5 delete p1.
  async function writeFeed() {
    const { warehouse } = store()
    await warehouse.upsert({ id: 'p1', type: 'person' })
    await warehouse.upsert({ id: 'b1', type: 'bill' })
    await warehouse.upsert({ id: 'p2', type: 'person' })
    await warehouse.upsert({ id: 'b1', type: 'bill', title: 'Act' })
    await warehouse.delete('p1')
  }

  it('is empty before the first change', async () => {
    expect(await store().feedHead()).toBeNull()
    expect(await page('', null, 10, 100)).toEqual({ seqs: [], cursor: null, hasMore: false })
    expect(await page('', changeId(7), 10, 100)).toEqual({ seqs: [], cursor: changeId(7), hasMore: false })
  })

  it('returns the whole feed with its fields', async () => {
    await writeFeed()
    const changes = await changesOf(store())
    expect(
      changes.map(({ changeId, entityId, changeType, changedKeys, mergedInto }) => [
        changeId,
        entityId,
        changeType,
        changedKeys,
        mergedInto,
      ]),
    ).toEqual([
      [changeId(1), 'p1', 'create', ['type'], null],
      [changeId(2), 'b1', 'create', ['type'], null],
      [changeId(3), 'p2', 'create', ['type'], null],
      [changeId(4), 'b1', 'update', ['title'], null],
      [changeId(5), 'p1', 'delete', ['type'], null],
    ])
    for (const change of changes) expect(Date.parse(change.recordedAt)).not.toBeNaN()
    expect(changes[3]?.snapshot).toEqual({ texts: [], type: 'bill', title: 'Act' })
    expect(changes[4]?.snapshot).toEqual({ texts: [] })
    expect(await store().feedHead()).toBe(changeId(5))
  })

  it('ends a full page at its last match and an unfilled one at the end of the window', async () => {
    await writeFeed()
    expect(await page('type:person', null, 1, 100)).toEqual({ seqs: [changeId(1)], cursor: changeId(1), hasMore: true })
    expect(await page('type:person', changeId(1), 1, 100)).toEqual({
      seqs: [changeId(3)],
      cursor: changeId(3),
      hasMore: true,
    })
    // The tombstone of p1 matches no type filter; the cursor still advances to the head.
    expect(await page('type:person', changeId(3), 1, 100)).toEqual({ seqs: [], cursor: changeId(5), hasMore: false })
    expect(await page('type:person', changeId(5), 1, 100)).toEqual({ seqs: [], cursor: changeId(5), hasMore: false })
  })

  it('scans at most the window', async () => {
    await writeFeed()
    expect(await page('type:person', null, 10, 2)).toEqual({ seqs: [changeId(1)], cursor: changeId(2), hasMore: true })
    expect(await page('type:bill', changeId(2), 10, 2)).toEqual({
      seqs: [changeId(4)],
      cursor: changeId(4),
      hasMore: true,
    })
    expect(await page('title:Act', changeId(4), 10, 2)).toEqual({ seqs: [], cursor: changeId(5), hasMore: false })
    expect(await page('', null, 2, 3)).toEqual({ seqs: [changeId(1), changeId(2)], cursor: changeId(2), hasMore: true })
  })

  it('recognizes its change ids', () => {
    expect(store().isChangeId(changeId(1))).toBe(true)
    expect(store().isChangeId('echg_1')).toBe(false)
    expect(store().isChangeId('p1')).toBe(false)
  })
})

describeStores(storeDialects, 'api keys', (dialect) => {
  const store = useStore(dialect)

  it('adds, finds and counts key hashes', async () => {
    const [first, second] = ['a'.repeat(64), 'b'.repeat(64)]
    expect(await store().countKeys()).toBe(0)
    await store().addKeyHash(first)
    await store().addKeyHash(first)
    expect(await store().hasKeyHash(first)).toBe(true)
    expect(await store().hasKeyHash(second)).toBe(false)
    await store().addKeyHash(second)
    expect(await store().countKeys()).toBe(2)
  })
})
