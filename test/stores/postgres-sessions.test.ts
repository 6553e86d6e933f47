/**
 * What the PostgreSQL store leaves in a server session, which a transaction pooler lends to other
 * clients between transactions. Reads go as named prepared statements (planned once a session)
 * only on a connection whose session is its own: directly, yes; through PgBouncer in transaction
 * mode, never (a name there would be prepared in a session other clients get next): there the hot
 * point reads call PL/pgSQL functions instead, whose plans the session keeps. Opening (its
 * migrations) leaves no session lock behind.
 */
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Qualifier } from '../../src/gffs/types.js'
import { SEEKABLE_FIELDS } from '../../src/kysely/filter-plan.js'
import { createPostgresStore, type KyselyStore } from '../../src/kysely/index.js'
import { pgbouncerSkipReason, startPgBouncer, type PgBouncer } from '../support/pgbouncer.js'
import { sessionPlannedReads } from '../../src/kysely/session-planned-reads.js'
import { resolveDialect } from '../../src/kysely/sql-dialect.js'
import { freshPostgresSchema, POSTGRES_URL, storeDialects } from './each-store.js'

const postgres = storeDialects.find((dialect) => dialect.name === 'postgres')!
const skipReason = postgres.skipReason ?? pgbouncerSkipReason

describe.skipIf(skipReason !== null)(`PostgreSQL sessions, directly and through PgBouncer${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  let bouncer: PgBouncer
  beforeAll(async () => {
    bouncer = await startPgBouncer({ poolSize: 1 })
  })
  afterAll(async () => {
    await bouncer?.stop()
  })

  /** The statements the store's one connection (one server session, PgBouncer's one too) has prepared, after reads. */
  async function preparedAfterReads(schema: { url: string; drop(): Promise<void> }): Promise<number> {
    const store: KyselyStore = await createPostgresStore({ connectionString: schema.url, poolSize: 1 })
    try {
      await store.warehouse.upsert({ id: 'p1', type: 'person', name: 'Ada' })
      for (let read = 0; read < 3; read++) {
        await store.getEntity('p1')
        await store.listEntities({ qualifiers: [], after: null, limit: 10 })
      }
      const { rows } = await sql<{ count: string }>`select count(*) from pg_prepared_statements where name like 'entity_registry_%'`.execute(store.db)
      return Number(rows[0]!.count)
    } finally {
      await store.close()
      await schema.drop()
    }
  }

  it('reads are named on a direct connection', async () => {
    expect(await preparedAfterReads(await freshPostgresSchema())).toBeGreaterThan(0)
  })

  it('reads are never named through PgBouncer in transaction mode', async () => {
    expect(await preparedAfterReads(await bouncer.freshSchema())).toBe(0)
  })

  it('through PgBouncer, a get, gets in one batch, the read of a merged entity\'s chain and a page of the default size, unfiltered or filtered by indexed equalities, are calls of the functions the migrations made, whose plans the server session keeps; directly, the statements themselves', async () => {
    const pooled = await bouncer.freshSchema()
    const schema = new URL(pooled.url).username
    const directUrl = new URL(POSTGRES_URL)
    directUrl.searchParams.set('options', `-c search_path=${schema}`)
    const store = await createPostgresStore({ connectionString: pooled.url })
    const direct = await createPostgresStore({ connectionString: directUrl.href })
    try {
      await store.warehouse.upsert({ id: 'a1', type: 'person', name: 'Ada' })
      await store.warehouse.upsert({ id: 'b1', type: 'person', name: 'Ada Lovelace' })
      await store.warehouse.merge('a1', 'b1')
      await store.warehouse.upsert({ id: 'c1', type: 'person', name: 'Grace', jurisdiction: 'US-WA' })
      const planned = sessionPlannedReads(store.db, await resolveDialect(store.db, 'postgres'))
      const { rows } = await sql<{ name: string }>`select proname as name from pg_proc where pronamespace = ${schema}::regnamespace and proname like 'entity_registry_read_%'`.execute(store.db)
      expect(rows.map((row) => row.name).sort()).toEqual(planned.map((read) => read.name).sort())
      const served = (await direct.getEntity('b1'))!.resource
      expect(served).toContain('Ada Lovelace')
      const grace = (await direct.getEntity('c1'))!.resource

      // Each function made to mark what it answers: a read that calls it says so.
      const [get, chain, among, firstPage, pageAfter] = planned
      // The pages filtered by the first filter index, type and jurisdiction (first, and after a cursor).
      expect(SEEKABLE_FIELDS[0]).toEqual(['type', 'jurisdiction'])
      const [typeAndJurisdiction, typeAndJurisdictionAfter] = planned.slice(5, 7)
      const marking = (name: string, parameters: string, mark: string, where = 'e.id = $1') =>
        sql.raw(`create or replace function ${schema}.${name}(${parameters}) returns table (id text, state text, merged_into text, snapshot text, resource text)
          language sql stable as $$ select e.id, e.state, e.merged_into, e.snapshot, '${mark}:' || e.id from ${schema}.entities e where ${where} $$`)
      const markingPage = (name: string, parameters: string, after: string) =>
        sql.raw(`create or replace function ${schema}.${name}(${parameters}) returns table (id text, resource text, head bigint)
          language sql stable as $$ select null, null, 1::bigint union all (select e.id, 'page:' || e.id, null from ${schema}.entities e where e.state = 'canonical' ${after} order by e.id) $$`)
      await marking(get!.name, 'text', 'get').execute(store.db)
      await marking(chain!.name, 'text, text', 'chain').execute(store.db)
      await marking(among!.name, 'text', 'among', 'e.id = any($1::text[])').execute(store.db)
      await markingPage(firstPage!.name, '', '').execute(store.db)
      await markingPage(pageAfter!.name, 'text', 'and e.id > $1').execute(store.db)
      await markingPage(typeAndJurisdiction!.name, 'text, text, text', 'and e.type = $1 and e.jurisdiction = $2').execute(store.db)
      await markingPage(typeAndJurisdictionAfter!.name, 'text, text, text, text', 'and e.type = $1 and e.jurisdiction = $2 and e.id > $3').execute(store.db)
      const equals = (field: 'type' | 'jurisdiction', value: string): Qualifier => ({ kind: 'qualifier', field, op: 'eq', negated: false, values: [value] })
      const resources = async (registry: KyselyStore, after: string | null, qualifiers: Qualifier[] = []) =>
        (await registry.listEntities({ qualifiers, after, limit: 100 })).entities.map((entity) => entity.resource)
      const inWashington = [equals('jurisdiction', 'US-WA'), equals('type', 'person')]
      expect((await store.getEntity('b1'))?.resource).toBe('get:b1')
      // Gets asked together (in one turn of the event loop) are one batch's read.
      const batch = await Promise.all(['a1', 'b1', 'b1', 'nobody'].map((id) => store.getEntity(id)))
      expect(batch.map((entity) => entity?.resource ?? null)).toEqual(['among:a1', 'among:b1', 'among:b1', null])
      expect((await store.getMergeEnd!('a1'))?.resource).toBe('chain:b1')
      expect(await resources(store, null)).toEqual(['page:b1', 'page:c1'])
      expect(await resources(store, 'b1')).toEqual(['page:c1'])
      expect(await resources(store, null, inWashington)).toEqual(['page:c1'])
      expect(await resources(store, 'b', inWashington)).toEqual(['page:c1'])
      // Pages of another size are statements of their own.
      expect((await store.listEntities({ qualifiers: [], after: null, limit: 10 })).entities.map((entity) => entity.resource)).toEqual([served, grace])
      expect((await direct.getEntity('b1'))?.resource).toBe(served)
      expect((await Promise.all(['b1', 'nobody'].map((id) => direct.getEntity(id)))).map((entity) => entity?.resource ?? null)).toEqual([served, null])
      expect((await direct.getMergeEnd!('a1'))?.resource).toBe(served)
      expect(await resources(direct, null)).toEqual([served, grace])
      expect(await resources(direct, null, inWashington)).toEqual([grace])

      // Without them (a replica that has not replayed their creation yet), the statements run themselves.
      for (const read of planned) await sql.raw(`drop function ${schema}.${read.name}`).execute(store.db)
      expect((await store.getEntity('b1'))?.resource).toBe(served)
      expect((await Promise.all(['b1', 'nobody'].map((id) => store.getEntity(id)))).map((entity) => entity?.resource ?? null)).toEqual([served, null])
      expect((await store.getMergeEnd!('a1'))?.resource).toBe(served)
      expect(await resources(store, 'a')).toEqual([served, grace])
      expect(await resources(store, 'b', inWashington)).toEqual([grace])
    } finally {
      await direct.close()
      await store.close()
      await pooled.drop()
    }
  })

  it('opens stores at once through PgBouncer on a new schema, and leaves no session lock held (the migrations lock with their transaction)', async () => {
    // Three server sessions for eight stores: a session lock taken on one would be let go on another.
    const shared = await startPgBouncer({ poolSize: 3 })
    const schema = await shared.freshSchema()
    const role = new URL(schema.url).username
    const stores: KyselyStore[] = []
    try {
      const opened = await Promise.allSettled(Array.from({ length: 8 }, () => createPostgresStore({ connectionString: schema.url })))
      for (const result of opened) if (result.status === 'fulfilled') stores.push(result.value)
      expect(opened.map((result) => (result.status === 'rejected' ? String(result.reason) : result.status))).toEqual(Array.from({ length: 8 }, () => 'fulfilled'))
      const { rows } = await sql<{ count: string }>`select count(*) from pg_locks l join pg_stat_activity a on a.pid = l.pid
        where l.locktype = 'advisory' and a.usename = ${role}`.execute(stores[0]!.db)
      expect(Number(rows[0]!.count)).toBe(0)
    } finally {
      for (const store of stores) await store.close()
      await schema.drop()
      await shared.stop()
    }
  })
})
