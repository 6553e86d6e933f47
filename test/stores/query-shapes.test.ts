/** Query shapes compiled once run with each call's own values, and a shape that can't be is built per call. */
import { sql } from 'kysely'
import pg from 'pg'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { parseGffs } from '../../src/gffs/index.js'
import { createPostgresStore, type KyselyStore } from '../../src/kysely/index.js'
import { createQueryShapes, parameterizeQualifiers, type ParameterValue } from '../../src/kysely/query-shapes.js'
import { isDependencyUnavailable } from '../../src/ports/dependency.js'
import { withPostgresClient } from '../support/postgres-client.js'
import { describeEachStore, freshPostgresSchema, storeDialects } from './each-store.js'

const qualifiersOf = (filter: string) => parseGffs(filter, { allowFreeText: false }).qualifiers

const sqlDialects = storeDialects.filter((dialect) => dialect.name !== 'memory')

describeEachStore(sqlDialects, 'query shapes', (dialect) => {
  let store: KyselyStore
  beforeEach(async () => {
    store = (await dialect.open()) as KyselyStore
    for (const [id, name] of [['a', 'Ada'], ['b', 'Bob'], ['c', 'Cy']] as const) await store.warehouse.upsert({ id, type: 'person', name })
  })
  afterEach(() => store.close())

  const names = (rows: { id: string }[]) => rows.map((row) => row.id)

  it('builds a shape once and runs it with each call\'s values', async () => {
    const shapes = createQueryShapes(store.db)
    let builds = 0
    const byName = (values: ParameterValue[]) => {
      builds++
      return store.db.selectFrom('entities').select('id').where('name', '=', values[0] as string).where('id', '>', values[1] as string).orderBy('id')
    }
    expect(names(await shapes.execute('by-name', ['Ada', ''], byName))).toEqual(['a'])
    expect(names(await shapes.execute('by-name', ['Bob', ''], byName))).toEqual(['b'])
    expect(names(await shapes.execute('by-name', ['Bob', 'b'], byName))).toEqual([])
    expect(builds).toBe(1)
  })

  it('builds per call a shape whose values do not reach the SQL unchanged: folded, inlined or repeated', async () => {
    const shapes = createQueryShapes(store.db)
    const builds: Record<string, number> = {}
    const counted = (key: string, build: (values: ParameterValue[]) => ReturnType<typeof store.db.selectFrom<'entities'>>) => (values: ParameterValue[]) => {
      builds[key] = (builds[key] ?? 0) + 1
      return build(values).select('id').orderBy('id')
    }
    // As `~` does: the name folded in SQL, the value folded in JS.
    const folded = counted('folded', (values) => store.db.selectFrom('entities').where((eb) => eb(eb.fn('lower', ['name']), '=', String(values[0]).toLowerCase())))
    const inlined = counted('inlined', (values) => store.db.selectFrom('entities').where('name', '=', sql.lit(String(values[0]))))
    const repeated = counted('repeated', (values) => store.db.selectFrom('entities').where((eb) => eb.or([eb('name', '=', values[0] as string), eb('id', '=', values[0] as string)])))
    for (const value of ['ADA', 'Bob']) expect(names(await shapes.execute('folded', [value], folded))).toEqual([value[0]!.toLowerCase()])
    for (const value of ['Ada', 'Bob']) expect(names(await shapes.execute('inlined', [value], inlined))).toEqual([value[0]!.toLowerCase()])
    for (const value of ['Ada', 'c']) expect(names(await shapes.execute('repeated', [value], repeated))).toEqual([value === 'c' ? 'c' : 'a'])
    // One build to find out, then one per call.
    expect(builds).toEqual({ folded: 3, inlined: 3, repeated: 3 })
  })

  it('gives list pages the same entities on every call of a cached shape, filters of every kind included', async () => {
    for (const filter of ['type:person', 'name:~a', '-name:Bob', 'name:A..B', 'name:>B']) {
      const qualifiers = qualifiersOf(filter)
      const first = await store.listEntities({ qualifiers, after: null, limit: 10 })
      const again = await store.listEntities({ qualifiers, after: null, limit: 10 })
      expect(again.entities.map((entity) => entity.id)).toEqual(first.entities.map((entity) => entity.id))
    }
    const page = (name: string) => store.listEntities({ qualifiers: qualifiersOf(`name:${name}`), after: null, limit: 10 })
    expect((await page('Ada')).entities.map((entity) => entity.id)).toEqual(['a'])
    expect((await page('Cy')).entities.map((entity) => entity.id)).toEqual(['c'])
  })
})

it('splits qualifiers into a shape and values, and puts other values back in the same places', () => {
  const { key, values, withValues } = parameterizeQualifiers(qualifiersOf('type:person,committee name:~ada displayDate:2000..* status:>b'))
  expect(values).toEqual(['person', 'committee', 'ada', '2000', 'b'])
  expect(parameterizeQualifiers(qualifiersOf('type:x,y name:~z displayDate:1..* status:>q')).key).toBe(key)
  expect(parameterizeQualifiers(qualifiersOf('type:x name:~z displayDate:1..* status:>q')).key).not.toBe(key)
  expect(withValues(['1', '2', '3', '4', '5'])).toEqual(qualifiersOf('type:1,2 name:~3 displayDate:4..* status:>5'))
})

const postgres = storeDialects.find((dialect) => dialect.name === 'postgres')!
describe.skipIf(postgres.skipReason !== null)(`named reads on PostgreSQL${postgres.skipReason ? ` (skipped: ${postgres.skipReason})` : ''}`, () => {
  it('prepares each read once a connection, under a name, and a write not', async () => {
    const schema = await freshPostgresSchema()
    // One connection: the statements it prepared are the ones pg_prepared_statements lists.
    const store = await createPostgresStore({ pool: new pg.Pool({ connectionString: schema.url, max: 1 }) })
    try {
      await store.warehouse.upsert({ id: 'a', type: 'person', name: 'Ada' })
      for (const name of ['Ada', 'Bob', 'Ada']) await store.listEntities({ qualifiers: qualifiersOf(`name:${name}`), after: null, limit: 10 })
      const { rows } = await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(store.db)
      const named = rows.filter((row) => row.name.startsWith('entity_registry_'))
      expect(named.filter((row) => /from "entities"/.test(row.statement) && /"name" in/.test(row.statement))).toHaveLength(1)
      expect(named.some((row) => /^insert/i.test(row.statement))).toBe(false)
    } finally {
      await store.close()
      await schema.drop()
    }
  })

  it('sends a read outside Kysely on a pool connection: cut past readTimeoutMs, that connection dropped, the next read answered', async () => {
    const schema = await freshPostgresSchema()
    const pool = new pg.Pool({ connectionString: schema.url, max: 1 })
    const store = await createPostgresStore({ pool, readTimeoutMs: 300 })
    try {
      await store.warehouse.upsert({ id: 'a', type: 'person', name: 'Ada' })
      const backend = async () => (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(store.db)).rows[0]!.pid
      const before = await backend()
      await withPostgresClient(schema.url, async (locker) => {
        // Held until the read has failed: the read waits for the lock, so the server answers late.
        await locker.query('begin')
        await locker.query('lock table entities in access exclusive mode')
        const started = Date.now()
        const error = await store.getEntity('a').then(() => null, (thrown: unknown) => thrown)
        expect(isDependencyUnavailable(error) && error.dependency).toBe('store')
        expect(Date.now() - started).toBeLessThan(2000)
        await locker.query('rollback')
      })
      expect((await store.getEntity('a'))?.id).toBe('a')
      expect((await store.listEntities({ qualifiers: qualifiersOf('type:person'), after: null, limit: 10 })).entities.map((entity) => entity.id)).toEqual(['a'])
      // The pool of one lent a new connection: the one left waiting was ended.
      expect(await backend()).not.toBe(before)
    } finally {
      await store.close()
      await schema.drop()
    }
  })
})
