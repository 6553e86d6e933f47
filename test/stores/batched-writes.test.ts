// A Kysely store's transaction reads a batch's entities at once and writes at its end, the last
// write of each entity: what one batch does to an entity several times must come out as it would
// one operation a transaction.
import { expect, it } from 'vitest'
import type { KyselyStore } from '../../src/kysely/index.js'
import type { WarehouseOperation } from '../../src/ports/warehouse.js'
import { describeEachStore, sqlDialects, useStore } from './each-store.js'

describeEachStore(sqlDialects, 'a batch that touches an entity several times', (dialect) => {
  const store = useStore(dialect) as () => KyselyStore
  const apply = async (operations: WarehouseOperation[]) => {
    const results = await store().warehouse.apply(operations)
    for (const result of results) if (!result.ok) throw result.error
    return results.map((result) => (result.ok && result.change ? result.change.changeType : null))
  }
  const row = (id: string) => store().db.selectFrom('entities').select(['state', 'merged_into', 'title', 'private_snapshot', 'resource']).where('id', '=', id).executeTakeFirstOrThrow()
  const feed = async () => (await store().listChanges({ qualifiers: [], after: null, limit: 100, window: 100 })).changes.map((change) => `${change.entityId} ${change.changeType} ${change.snapshot.title ?? ''}`)

  it('writes the last state, records each change in order, and keeps private-only changes', async () => {
    expect(
      await apply([
        { op: 'upsert', record: { id: 'a', type: 'person', title: 'A1', note: 1 } },
        { op: 'upsert', record: { id: 'a', type: 'person', title: 'A2', note: 2 } },
        { op: 'upsert', record: { id: 'b', type: 'person', title: 'B', note: 'b' } },
        { op: 'merge', id: 'b', into: 'a' },
      ]),
    ).toEqual(['create', 'update', 'create', 'merge'])
    expect(await row('a')).toMatchObject({ state: 'canonical', title: 'A2', private_snapshot: JSON.stringify({ type: 'person', title: 'A2', note: 2 }) })
    // The merge keeps the private snapshot written earlier in the same batch.
    expect(await row('b')).toMatchObject({ state: 'merged', merged_into: 'a', resource: null, private_snapshot: JSON.stringify({ type: 'person', title: 'B', note: 'b' }) })

    // A private key changed alone: no change record, but the record is kept.
    expect(await apply([{ op: 'upsert', record: { id: 'a', type: 'person', title: 'A2', note: 3 } }])).toEqual([null])
    expect(JSON.parse((await row('a')).private_snapshot)).toEqual({ type: 'person', title: 'A2', note: 3 })
    // The same record again: nothing.
    expect(await apply([{ op: 'upsert', record: { id: 'a', type: 'person', title: 'A2', note: 3 } }])).toEqual([null])

    // Merged, then made canonical again, then changed back: each step recorded, the last one stored.
    expect(
      await apply([
        { op: 'upsert', record: { id: 'b', type: 'person', title: 'B again' } },
        { op: 'delete', id: 'b' },
        { op: 'upsert', record: { id: 'b', type: 'person', title: 'B' } },
      ]),
    ).toEqual(['create', 'delete', 'create'])
    expect(await row('b')).toMatchObject({ state: 'canonical', merged_into: null, title: 'B', private_snapshot: JSON.stringify({ type: 'person', title: 'B' }) })
    expect(await feed()).toEqual(['a create A1', 'a update A2', 'b create B', 'b merge B', 'b create B again', 'b delete ', 'b create B'])
  })

  it('takes a record equal to the stored one, keys in any order, as unchanged; any other is validated and applied', async () => {
    const record = { id: 'e', type: 'person', title: 'E', extra: { list: [1, { deep: 'x' }] } }
    expect(await apply([{ op: 'upsert', record }])).toEqual(['create'])
    expect(await apply([{ op: 'upsert', record: { extra: { list: [1, { deep: 'x' }] }, title: 'E', type: 'person', id: 'e' } }])).toEqual([null])
    // A private value deep inside changed: kept, with no change record.
    expect(await apply([{ op: 'upsert', record: { ...record, extra: { list: [1, { deep: 'y' }] } } }])).toEqual([null])
    expect(JSON.parse((await row('e')).private_snapshot).extra).toEqual({ list: [1, { deep: 'y' }] })
    const [invalid] = await store().warehouse.apply([{ op: 'upsert', record: { ...record, title: 42 } as never }])
    expect(invalid).toMatchObject({ ok: false, error: { code: 'invalid_record' } })
    expect(await apply([{ op: 'upsert', record: { ...record, title: 'E2' } }])).toEqual(['update'])
  })

  it('keeps the record in the key order it was given, and its text as given, quotes, backslashes and braces included', async () => {
    // Keys out of the contract's order: kept as given, so that the same line again compares as text.
    const record = { id: 'q', zeta: 1, title: 'say "hi" \\ {x, y}', type: 'person', name: 'NULL', jurisdiction: '', status: 'é ✓' }
    expect(await apply([{ op: 'upsert', record }])).toEqual(['create'])
    const { id: _, ...rest } = record
    expect(await row('q')).toMatchObject({ title: record.title, private_snapshot: JSON.stringify(rest) })
    expect(await store().db.selectFrom('entities').select(['name', 'jurisdiction', 'status', 'authority']).where('id', '=', 'q').executeTakeFirstOrThrow()).toEqual({
      name: 'NULL',
      jurisdiction: '',
      status: 'é ✓',
      authority: null,
    })
    expect(await apply([{ op: 'upsert', record: { ...record } }])).toEqual([null])
    expect(await feed()).toEqual([`q create ${record.title}`])
  })

  it('checks a merge against what the batch wrote before it', async () => {
    const results = await store().warehouse.apply([
      { op: 'upsert', record: { id: 'c', type: 'person', title: 'C' } },
      { op: 'upsert', record: { id: 'd', type: 'person', title: 'D' } },
      { op: 'delete', id: 'd' },
      { op: 'merge', id: 'c', into: 'd' },
      { op: 'merge', id: 'c', into: 'nobody' },
    ])
    expect(results.map((result) => (result.ok ? 'ok' : result.error.code))).toEqual(['ok', 'ok', 'ok', 'invalid_merge', 'not_found'])
    expect(await row('c')).toMatchObject({ state: 'canonical', merged_into: null })
    expect(await feed()).toEqual(['c create C', 'd create D', 'd delete '])
  })
})
