/** Query shapes compiled once run with each call's own values, and a shape that can't be is built per call. */
import { CompiledQuery, sql } from 'kysely'
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

  it('shares a read that went to the database with the same shape and values asked in the same turn of the event loop; a later turn reads anew', async () => {
    let sent = 0
    // Every read goes to a server, and ends in a later turn, as on PostgreSQL.
    const toServer = (text: string, parameters: readonly unknown[]) => {
      sent++
      return new Promise((resolve) => setTimeout(resolve, 1)).then(async () => (await store.db.executeQuery<{ id: string }>(CompiledQuery.raw(text, [...parameters]))).rows)
    }
    const shapes = createQueryShapes(store.db, toServer, { shareReadsOfATurn: true })
    const byName = (values: ParameterValue[]) => store.db.selectFrom('entities').select('id').where('name', '=', values[0] as string).orderBy('id')
    const together = await Promise.all([shapes.execute('by-name', ['Ada'], byName), shapes.execute('by-name', ['Ada'], byName), shapes.execute('by-name', ['Bob'], byName)])
    expect(together.map(names)).toEqual([['a'], ['a'], ['b']])
    expect(sent).toBe(2)
    await store.warehouse.upsert({ id: 'a2', type: 'person', name: 'Ada' })
    expect(names(await shapes.execute('by-name', ['Ada'], byName))).toEqual(['a', 'a2'])
    expect(sent).toBe(3)
    // Unasked (reads that may end in their own turn, as SQLite's), each read is its own.
    const unshared = createQueryShapes(store.db, toServer)
    await Promise.all([unshared.execute('by-name', ['Ada'], byName), unshared.execute('by-name', ['Ada'], byName)])
    expect(sent).toBe(5)
  })

  it('builds per call a shape whose values do not reach the SQL unchanged: folded, inlined, or bound and folded too', async () => {
    const shapes = createQueryShapes(store.db)
    const builds: Record<string, number> = {}
    const counted = (key: string, build: (values: ParameterValue[]) => ReturnType<typeof store.db.selectFrom<'entities'>>) => (values: ParameterValue[]) => {
      builds[key] = (builds[key] ?? 0) + 1
      return build(values).select('id').orderBy('id')
    }
    // As `~` does: the name folded in SQL, the value folded in JS.
    const folded = counted('folded', (values) => store.db.selectFrom('entities').where((eb) => eb(eb.fn('lower', ['name']), '=', String(values[0]).toLowerCase())))
    const inlined = counted('inlined', (values) => store.db.selectFrom('entities').where('name', '=', sql.lit(String(values[0]))))
    const alsoFolded = counted('also folded', (values) =>
      store.db.selectFrom('entities').where((eb) => eb.or([eb('name', '=', values[0] as string), eb('id', '=', String(values[0]).toLowerCase())])),
    )
    for (const value of ['ADA', 'Bob']) expect(names(await shapes.execute('folded', [value], folded))).toEqual([value[0]!.toLowerCase()])
    for (const value of ['Ada', 'Bob']) expect(names(await shapes.execute('inlined', [value], inlined))).toEqual([value[0]!.toLowerCase()])
    for (const value of ['Ada', 'C']) expect(names(await shapes.execute('also folded', [value], alsoFolded))).toEqual([value[0]!.toLowerCase()])
    // One build to find out, then one per call.
    expect(builds).toEqual({ folded: 3, inlined: 3, 'also folded': 3 })
  })

  it('builds once a shape that binds a value twice, and runs it with the call\'s value in both places', async () => {
    const shapes = createQueryShapes(store.db)
    let builds = 0
    const byNameOrId = (values: ParameterValue[]) => {
      builds++
      return store.db.selectFrom('entities').select('id').where((eb) => eb.or([eb('name', '=', values[0] as string), eb('id', '=', values[0] as string)])).orderBy('id')
    }
    for (const value of ['Ada', 'c', 'Bob']) expect(names(await shapes.execute('by name or id', [value], byNameOrId))).toEqual([value === 'Ada' ? 'a' : value === 'c' ? 'c' : 'b'])
    expect(builds).toBe(1)
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
      // A merged id's chain is read by a recursive statement (`with recursive`): a read too, planned
      // anew on every call when unnamed (in the bench, 516 us of the server's CPU a get against 203).
      await store.warehouse.upsert({ id: 'b', type: 'person', name: 'Bob' })
      await store.warehouse.merge('b', 'a')
      for (let get = 0; get < 2; get++) expect((await store.getMergeEnd!('b'))?.id).toBe('a')
      const { rows } = await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(store.db)
      const named = rows.filter((row) => row.name.startsWith('entity_registry_'))
      expect(named.filter((row) => /from "entities"/.test(row.statement) && /"name" in/.test(row.statement))).toHaveLength(1)
      expect(named.filter((row) => /^with recursive/i.test(row.statement))).toHaveLength(1)
      expect(named.some((row) => /^insert/i.test(row.statement))).toBe(false)
    } finally {
      await store.close()
      await schema.drop()
    }
  })

  it('plans a filtered page once a connection: its plan, on the seek index, is the same whatever the values', async () => {
    const schema = await freshPostgresSchema()
    const store = await createPostgresStore({ pool: new pg.Pool({ connectionString: schema.url, max: 1 }) })
    try {
      const jurisdictions = ['US-WA', 'US-OR', 'US-CA', 'US-NY', 'US-TX', 'US-AL', 'US-AK', 'US-AZ', 'US-AR', 'US-CO']
      const type = (n: number) => (n % 10 < 6 ? 'person' : n % 10 < 9 ? 'legislation' : 'committee')
      await store.warehouse.apply(
        Array.from({ length: 3000 }, (_, n) => ({ op: 'upsert' as const, record: { id: `e${String(n).padStart(5, '0')}`, type: type(n), name: `E ${n}`, jurisdiction: jurisdictions[(n * 7) % 10]! } })),
      )
      await sql`analyze entities`.execute(store.db)
      const page = (filter: string) => store.listEntities({ qualifiers: qualifiersOf(filter), after: null, limit: 100 })
      for (let call = 0; call < 8; call++) expect((await page('type:person jurisdiction:US-WA')).entities).toHaveLength(100)
      expect((await page('type:person jurisdiction:US-XX')).entities).toEqual([])
      const { rows } = await sql<{ statement: string; generic_plans: string; custom_plans: string }>`
        select statement, generic_plans, custom_plans from pg_prepared_statements where statement like '%"jurisdiction"%'`.execute(store.db)
      expect(rows).toHaveLength(1)
      expect(Number(rows[0]!.generic_plans)).toBeGreaterThanOrEqual(4)
      // A plan made for the values (PostgreSQL's custom plan) is the generic one: a value that
      // matches nothing gets the same. Were they told apart, the custom plans of a common value
      // could be estimated cheaper than the generic plan, and PostgreSQL would plan every call anew.
      await withPostgresClient(schema.url, async (client) => {
        const placeholders = rows[0]!.statement.match(/\$\d+/g)!.length
        await client.query(`prepare page as ${rows[0]!.statement}`)
        const planFor = async (jurisdiction: string) => {
          const values = Array.from({ length: placeholders }, (_, index) => client.escapeLiteral(index % 2 === 0 ? 'person' : jurisdiction))
          const explained = await client.query(`explain (format json) execute page(${values.join(', ')})`)
          return explained.rows[0]['QUERY PLAN'][0].Plan
        }
        const common = await planFor('US-WA')
        expect(await planFor('US-XX')).toEqual(common)
        expect(JSON.stringify(common)).toContain('"Index Name":"entities_canonical_type_jurisdiction_id"')
      })
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
