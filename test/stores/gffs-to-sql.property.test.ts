/**
 * The SQL compilation of qualifiers agrees with the in-memory evaluation (`matchesQualifiers`) on
 * random entities and random qualifier trees, for entity lists and the change feed.
 */
import fc from 'fast-check'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { isEmptySnapshot } from '../../src/contract/entity.js'
import { CONTRACT_FIELDS, type ContractField } from '../../src/contract/fields.js'
import { matchesQualifiers } from '../../src/gffs/evaluate.js'
import { entityTemplate } from '../../src/http/documents.js'
import type { Qualifier } from '../../src/gffs/types.js'
import type { EntityRecord, WarehouseOperation } from '../../src/ports/warehouse.js'
import { normalizeRecord } from '../../src/warehouse/record.js'
import { describeEachStore, sqlDialects, type TestStore } from './each-store.js'

const RUNS = 100
const IDS = ['e0', 'e1', 'e2', 'e3', 'e4', 'e5', 'e6', 'e7']

// Case pairs, digits, LIKE wildcards, a space, and letters whose folding or code point order is
// easy to get wrong: accented, dotted capital I, a ligature above the surrogates, an astral emoji.
const ALPHABET = ['a', 'b', 'A', 'B', 'z', '0', '9', ' ', '%', '_', 'é', 'Ä', 'İ', 'ﬀ', '😀']
const text = fc.array(fc.constantFrom(...ALPHABET), { maxLength: 3 }).map((chars) => chars.join(''))
const field = fc.constantFrom(...CONTRACT_FIELDS)
const RECASINGS = [
  (value: string) => value,
  (value: string) => value.toUpperCase(),
  (value: string) => value.toLowerCase(),
]

/** Each contract field present or missing; an entity with none becomes a tombstone, as in the warehouse. */
const entities: fc.Arbitrary<EntityRecord[]> = fc
  .uniqueArray(
    fc.record({ id: fc.constantFrom(...IDS), fields: fc.dictionary(field, text, { maxKeys: CONTRACT_FIELDS.length }) }),
    { selector: (entity) => entity.id, maxLength: IDS.length },
  )
  .map((list) => list.map(({ id, fields }) => ({ ...fields, ...(fields.type === undefined ? {} : { type: memberName(fields.type) }), id })))

/** A resource type must be a JSON:API member name: other characters become letters, and it is framed by letters. */
function memberName(value: string): string {
  return `T${value.replace(/[^A-Za-z0-9\u0080-\uffff_ -]/g, 'a')}t`
}

/**
 * A field and a value to filter it by: often a piece of a value the entities hold, recased, so that
 * equality, containment and the comparisons meet their edge cases instead of missing everything.
 */
function fieldValue(records: EntityRecord[]): fc.Arbitrary<{ field: ContractField; value: string }> {
  const held = records.flatMap((record) =>
    CONTRACT_FIELDS.flatMap((name) => (typeof record[name] === 'string' ? [{ field: name, value: record[name] }] : [])),
  )
  const random = fc.record({ field, value: text })
  if (held.length === 0) return random
  const piece = fc
    .tuple(fc.constantFrom(...held), fc.nat(2), fc.integer({ min: 1, max: 3 }), fc.constantFrom(...RECASINGS))
    .map(([{ field, value }, start, length, recase]) => ({
      field,
      // By code point, so that no lone surrogate is cut off an emoji.
      value: recase(
        Array.from(value)
          .slice(start, start + length)
          .join(''),
      ),
    }))
  return fc.oneof(random, piece, piece)
}

function qualifierFor(records: EntityRecord[]): fc.Arbitrary<Qualifier> {
  return fieldValue(records).chain(({ field, value }) => {
    const near = fc.oneof(fc.constant(value), text)
    const operation = fc.oneof(
      fc.record({ op: fc.constant('eq' as const), values: fc.array(near, { minLength: 1, maxLength: 3 }) }),
      fc.record({ op: fc.constant('contains' as const), values: fc.array(near, { minLength: 1, maxLength: 3 }) }),
      fc.record({ op: fc.constantFrom('gt' as const, 'gte' as const, 'lt' as const, 'lte' as const), value: near }),
      fc.record({ op: fc.constant('range' as const), from: fc.option(near), to: fc.option(near) }),
    )
    return fc
      .tuple(operation, fc.boolean())
      .map(([node, negated]) => ({ kind: 'qualifier' as const, field, negated, ...node }))
  })
}

/** Entities and a query over them. */
const scenario = entities.chain((records) =>
  fc.record({
    records: fc.constant(records),
    qualifiers: fc.array(qualifierFor(records), { maxLength: 3 }),
  }),
)

describeEachStore(sqlDialects, 'qualifiers compile to SQL as matchesQualifiers evaluates them', (dialect) => {
  let store: TestStore
  beforeAll(async () => {
    // A window of three candidates: filtered lists answer short pages, which paging must get right.
    store = await dialect.open({ listWindow: 3 })
  })
  afterAll(() => store?.close())

  /** Makes the canonical entities exactly `records` (one transaction) and returns the feed head before. */
  async function replaceEntities(records: EntityRecord[]): Promise<string | null> {
    const head = await store.feedHead()
    const written = new Set(records.map((record) => record.id))
    const withdrawn: WarehouseOperation[] = []
    for (const id of IDS) {
      if (!written.has(id) && (await store.getEntity(id))?.state === 'canonical') withdrawn.push({ op: 'delete', id })
    }
    await store.warehouse.apply([
      ...records.map((record): WarehouseOperation => ({ op: 'upsert', record })),
      ...withdrawn,
    ])
    return head
  }

  /**
   * The ids of every page. Each page is asked for joined too, as the HTTP handler asks: a joined
   * page (resources joined in the database, in the order of the page's subquery) must hold the
   * same resources in the same order, the same cursor and the same `hasMore`.
   */
  const asText = (joined: string | Uint8Array | undefined) => (joined instanceof Uint8Array ? new TextDecoder('utf-8', { fatal: true }).decode(joined) : joined)

  async function listAll(qualifiers: Qualifier[], limit: number): Promise<string[]> {
    const ids: string[] = []
    let after: string | null = null
    for (;;) {
      const page = await store.listEntities({ qualifiers, after, limit })
      const cursor = page.cursor !== undefined ? page.cursor : (page.entities.at(-1)?.id ?? null)
      const joined = await store.listEntities({ qualifiers, after, limit, joined: true })
      expect({
        resources: asText(joined.joinedResources) ?? joined.entities.map(entityTemplate).join(','),
        hasMore: joined.hasMore,
        cursor: joined.cursor !== undefined ? joined.cursor : (joined.entities.at(-1)?.id ?? null),
      }).toEqual({ resources: page.entities.map(entityTemplate).join(','), hasMore: page.hasMore, cursor })
      ids.push(...page.entities.map((entity) => entity.id))
      if (!page.hasMore) return ids
      after = cursor
    }
  }

  it('lists exactly the matching entities', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, fc.integer({ min: 1, max: 4 }), async ({ records, qualifiers }, limit) => {
        await replaceEntities(records)
        const expected = records
          .map((record) => ({ id: record.id, snapshot: normalizeRecord(record).snapshot }))
          .filter(({ snapshot }) => !isEmptySnapshot(snapshot) && matchesQualifiers(qualifiers, snapshot))
          .map(({ id }) => id)
          .sort()
        expect(await listAll(qualifiers, limit)).toEqual(expected)
      }),
      { numRuns: RUNS },
    )
  })

  it('filters the change feed exactly', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ records, qualifiers }) => {
        const after = await replaceEntities(records)
        const page = { after, limit: 100, window: 1000 }
        const written = await store.listChanges({ ...page, qualifiers: [] })
        const filtered = await store.listChanges({ ...page, qualifiers })
        const expected = written.changes.filter((change) => matchesQualifiers(qualifiers, change.snapshot))
        expect(filtered.changes.map((change) => change.changeId)).toEqual(expected.map((change) => change.changeId))
        expect(filtered.cursor).toBe(written.cursor)
      }),
      { numRuns: RUNS },
    )
  })
})
