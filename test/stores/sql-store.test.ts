/** What only the SQL stores have: private snapshots, transactions, serialized writers. */
import { sql } from 'kysely'
import { expect, it } from 'vitest'
import { createApiKeyAuthenticator } from '../../src/auth/api-keys.js'
import { hashApiKey } from '../../src/auth/key-format.js'
import { createKeyManager } from '../../src/auth/key-manager.js'
import type { z } from 'zod'
import { entityCollectionDocumentSchema } from '../../src/contract/schemas.js'
import { parseGffs } from '../../src/gffs/parse.js'
import { testRegistry } from '../support/demo.js'
import { readDocument } from '../support/documents.js'
import { EMPTY_SNAPSHOT, type StoredChange } from '../../src/contract/entity.js'
import { createPostgresStore, type KyselyStore } from '../../src/kysely/index.js'
import { createKyselyWarehouseBackend } from '../../src/kysely/kysely-warehouse-backend.js'
import { migrateToLatest } from '../../src/kysely/migrations.js'
import { resolveDialect } from '../../src/kysely/sql-dialect.js'
import type { NewChange } from '../../src/ports/warehouse-backend.js'
import { describeEachStore, freshPostgresSchema, sqlDialects, useStore } from './each-store.js'

async function privateSnapshot(store: KyselyStore, id: string): Promise<unknown> {
  const row = await store.db
    .selectFrom('entities')
    .select('private_snapshot')
    .where('id', '=', id)
    .executeTakeFirstOrThrow()
  return JSON.parse(row.private_snapshot)
}

function newChange(entityId: string): NewChange {
  return {
    entityId,
    changeType: 'create',
    changedKeys: [],
    mergedInto: null,
    recordedAt: new Date().toISOString(),
    snapshot: EMPTY_SNAPSHOT,
    previousSnapshot: EMPTY_SNAPSHOT,
  }
}

/** A promise that `open()` resolves (Node 20 has no Promise.withResolvers). */
function latch(): { opened: Promise<void>; open(): void } {
  let open = () => {}
  const opened = new Promise<void>((resolve) => {
    open = resolve
  })
  return { opened, open }
}

async function backendOf(store: KyselyStore, dialectName: string) {
  return createKyselyWarehouseBackend(
    store.db,
    await resolveDialect(store.db, dialectName === 'sqlite' ? 'sqlite' : 'postgres'),
  )
}

describeEachStore(sqlDialects, 'SQL store', (dialect) => {
  const store = useStore(dialect)

  it('keeps the private snapshot through a merge and clears it on delete', async () => {
    const { warehouse } = store()
    await warehouse.upsert({ id: 'a', type: 'person', secret: { nested: [1] } })
    await warehouse.upsert({ id: 'b', type: 'person' })
    expect(await privateSnapshot(store(), 'a')).toEqual({ type: 'person', secret: { nested: [1] } })
    await warehouse.merge('a', 'b')
    expect(await privateSnapshot(store(), 'a')).toEqual({ type: 'person', secret: { nested: [1] } })
    await warehouse.delete('b')
    expect(await privateSnapshot(store(), 'b')).toEqual({})
  })

  it('rolls a failed transaction back and stays usable', async () => {
    const backend = await backendOf(store(), dialect.name)
    const failed = backend.transaction(async (tx) => {
      await tx.putEntity({ id: 'a', state: 'canonical', mergedInto: null, snapshot: { texts: [], type: 'person' } }, {})
      await tx.appendChange(newChange('a'))
      throw new Error('boom')
    })
    await expect(failed).rejects.toThrow('boom')
    expect(await store().getEntity('a')).toBeNull()
    expect(await store().feedHead()).toBeNull()
    expect((await store().warehouse.upsert({ id: 'a', type: 'person' }))?.changeType).toBe('create')
  })

  it('serializes concurrent merges: of a into b and b into a, one is rejected', async () => {
    const { warehouse } = store()
    await warehouse.upsert({ id: 'a', type: 'person' })
    await warehouse.upsert({ id: 'b', type: 'person' })
    const outcomes = await Promise.allSettled([warehouse.merge('a', 'b'), warehouse.merge('b', 'a')])
    expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected'])
    const states = await Promise.all(['a', 'b'].map(async (id) => (await store().getEntity(id))?.state))
    expect(states.sort()).toEqual(['canonical', 'merged'])
  })

  // With one connection (SQLite, PGlite) a reader waits for the writer anyway.
  it.runIf(dialect.name === 'postgres')('holds a later writer until the earlier one commits', async () => {
    const backend = await backendOf(store(), dialect.name)
    const appended = latch()
    const release = latch()
    const first = backend.transaction(async (tx) => {
      await tx.appendChange(newChange('first'))
      appended.open()
      await release.opened
    })
    await appended.opened
    const second = backend.transaction((tx) => tx.appendChange(newChange('second')))
    // Unserialized, the second change would commit now, and a reader would see it and step past the first.
    await new Promise((resolve) => setTimeout(resolve, 200))
    const during = await store().listChanges({
      qualifiers: [],
      after: null,
      limit: 10,
      window: 10,
    })
    release.open()
    await Promise.all([first, second])
    expect(during.changes).toEqual([])
    const after = await store().listChanges({
      qualifiers: [],
      after: null,
      limit: 10,
      window: 10,
    })
    expect(after.changes.map((change) => change.entityId)).toEqual(['first', 'second'])
  })

  it('never lets a tailing reader miss a change written concurrently', async () => {
    const writers = 4
    const writesEach = 15
    let writing = true
    const write = Promise.all(
      Array.from({ length: writers }, async (_, writer) => {
        for (let index = 0; index < writesEach; index++)
          await store().warehouse.upsert({ id: `w${writer}x${index}`, type: 'thing' })
      }),
    ).finally(() => {
      writing = false
    })
    const seen: StoredChange[] = []
    let cursor: string | null = null
    const follow = async () => {
      const page = await store().listChanges({
        qualifiers: [],
        after: cursor,
        limit: 7,
        window: 50,
      })
      seen.push(...page.changes)
      cursor = page.cursor
      return page.hasMore
    }
    while (writing) await follow()
    await write
    while (await follow());
    const feed = await store().listChanges({
      qualifiers: [],
      after: null,
      limit: 100,
      window: 100,
    })
    expect(feed.changes).toHaveLength(writers * writesEach)
    expect(seen.map((change) => change.changeId)).toEqual(feed.changes.map((change) => change.changeId))
  })
})

describeEachStore(
  sqlDialects.filter((dialect) => dialect.name === 'postgres'),
  'PostgreSQL schemas',
  () => {
    it('migrates a schema of its own while another schema of the database holds a registry', async () => {
      const [first, second] = [await freshPostgresSchema(), await freshPostgresSchema()]
      const stores: KyselyStore[] = []
      try {
        stores.push(await createPostgresStore({ connectionString: first.url }))
        await stores[0]!.warehouse.upsert({ id: 'a', type: 'person' })
        stores.push(await createPostgresStore({ connectionString: second.url }))
        expect((await stores[1]!.listEntities({ qualifiers: [], after: null, limit: 10 })).entities).toEqual([])
        expect((await stores[0]!.listEntities({ qualifiers: [], after: null, limit: 10 })).entities.map((e) => e.id)).toEqual(['a'])
      } finally {
        for (const store of stores) await store.close()
        await first.drop()
        await second.drop()
      }
    })

    it('opens one new schema from four stores at once: one migrates, the others wait for it, and no lock is left', async () => {
      const schema = await freshPostgresSchema()
      const stores = await Promise.all(Array.from({ length: 4 }, () => createPostgresStore({ connectionString: schema.url })))
      try {
        await stores[0]!.warehouse.upsert({ id: 'a', type: 'person' })
        for (const store of stores) expect((await store.listEntities({ qualifiers: [], after: null, limit: 10 })).entities.map((e) => e.id)).toEqual(['a'])
        // The migration's lock is a transaction's: none outlives the opens (a session's would, through a pooler).
        const { rows } = await sql<{ held: number }>`select count(*)::int as held from pg_locks
          where locktype = 'advisory' and classid = hashtext('entity_registry_migrations')::oid and objid = hashtext(current_schema())::oid`.execute(stores[0]!.db)
        expect(rows[0]!.held).toBe(0)
      } finally {
        for (const store of stores) await store.close()
        await schema.drop()
      }
    })

    // 40 schemas migrated and dropped beside a churn of others: over 30 s on a busy 2-core machine.
    it('opens while other schemas of the database are created and dropped', { timeout: 120_000 }, async () => {
      // Other apps (or other test files) drop schemas at any time; opening must not read their tables.
      let churning = true
      const churn = (async () => {
        while (churning) {
          const other = await freshPostgresSchema()
          const store = await createPostgresStore({ connectionString: other.url })
          await store.close()
          await other.drop()
        }
      })()
      try {
        for (let round = 0; round < 40; round += 1) {
          const schema = await freshPostgresSchema()
          const store = await createPostgresStore({ connectionString: schema.url })
          await store.close()
          await schema.drop()
        }
      } finally {
        churning = false
        await churn
      }
    })
  },
)

describeEachStore(
  sqlDialects.filter((dialect) => dialect.name === 'postgres'),
  'PostgreSQL statistics',
  (dialect) => {
    const store = useStore(dialect)

    // Whether or not autovacuum is on (it is off on the test server), and before its naptime passes.
    it('are gathered by the writer as the tables grow, so a filtered page walks the id index rather than sorting the table', async () => {
      for (let start = 0; start < 20_000; start += 1000) {
        await store().warehouse.apply(
          Array.from({ length: 1000 }, (_, offset) => ({ op: 'upsert' as const, record: { id: `e${String(start + offset).padStart(5, '0')}`, type: 'person', name: `person number ${start + offset}` } })),
        )
      }
      // A filtered page's window (kysely-store.ts): the first rows of the canonical entities in id order.
      const { rows } = await sql<{ 'QUERY PLAN': unknown }>`explain (format json)
        select count(*), max(id) from (select id from entities where state = 'canonical' order by id limit 5000) as window_rows`.execute(store().db)
      const plan = JSON.stringify(rows[0]!['QUERY PLAN'])
      expect(plan).toContain('"Index Name":"entities_canonical_id"')
      expect(plan).not.toContain('"Node Type":"Sort"')
    })
  },
)

describeEachStore(sqlDialects, 'bounded list requests', (dialect) => {
  it('answers a sparse filter with short pages whose cursor moves past the rows checked', async () => {
    const store = await dialect.open({ listWindow: 5 })
    try {
      const ids = Array.from({ length: 20 }, (_, index) => `e${index.toString().padStart(2, '0')}`)
      for (const id of ids) await store.warehouse.upsert({ id, type: 'thing', title: id === 'e03' || id === 'e18' ? 'a buzz' : 'plain' })
      const { get } = testRegistry(store)
      const pages: { ids: string[]; cursor: string | null; next: boolean }[] = []
      for (let next: string | undefined = '/v1/entities?filter=title:~zz&page[limit]=10'; next; ) {
        const page: z.infer<typeof entityCollectionDocumentSchema> = await readDocument(await get(next), entityCollectionDocumentSchema)
        pages.push({ ids: page.data.map((entity) => entity.id), cursor: page.meta.cursor, next: page.links.next !== undefined })
        next = page.links.next
      }
      // Five candidates a request: e00-e04, e05-e09, e10-e14, e15-e19, then nothing left.
      expect(pages).toEqual([
        { ids: ['e03'], cursor: 'e04', next: true },
        { ids: [], cursor: 'e09', next: true },
        { ids: [], cursor: 'e14', next: true },
        { ids: ['e18'], cursor: 'e19', next: true },
        { ids: [], cursor: 'e19', next: false },
      ])
      // An index answers exactly: full pages, the cursor on the last entity.
      const exact = await readDocument(await get('/v1/entities?filter=type:thing&page[limit]=10'), entityCollectionDocumentSchema)
      expect([exact.data.length, exact.meta.cursor]).toEqual([10, 'e09'])
    } finally {
      await store.close()
    }
  })
})

describeEachStore(sqlDialects, 'pages read as rows', (dialect) => {
  const store = useStore(dialect)

  // PostgreSQL's pages (`joined: false`): the head is a row of its own in the page's statement.
  it('carries the feed head of its own statement on every page, an empty one too, and no row of it among the entities', async () => {
    const page = (qualifiers: string, after: string | null, limit: number) =>
      store().listEntities({ qualifiers: parseGffs(qualifiers, { allowFreeText: false }).qualifiers, after, limit, joined: false })
    expect(await page('', null, 10)).toMatchObject({ entities: [], hasMore: false, cursor: null, feedHead: null })
    for (const id of ['a', 'b', 'c']) await store().warehouse.upsert({ id, type: 'thing' })
    const head = await store().feedHead()
    expect(head).not.toBeNull()
    const pages = [await page('type:thing', null, 2), await page('type:thing', 'b', 2), await page('type:nothing', null, 2)]
    expect(pages.map(({ entities, hasMore, cursor, feedHead }) => ({ ids: entities.map((entity) => entity.id), hasMore, cursor, feedHead }))).toEqual([
      { ids: ['a', 'b'], hasMore: true, cursor: 'b', feedHead: head },
      { ids: ['c'], hasMore: false, cursor: 'c', feedHead: head },
      { ids: [], hasMore: false, cursor: null, feedHead: head },
    ])
    // A page as long as what is left is the last.
    expect(await page('type:thing', 'a', 2)).toMatchObject({ hasMore: false, cursor: 'c' })
  })
})

describeEachStore(sqlDialects, 'entities read as rows', (dialect) => {
  const store = useStore(dialect)

  it('have their snapshot as a field of their own, parsed when read and settable, through one accessor shared by all', async () => {
    for (const id of ['a', 'b']) await store().warehouse.upsert({ id, type: 'thing', name: `name ${id}` })
    const [a, b] = await store().getEntities!(['a', 'b'])
    // As a plain entity: copied, cloned and serialized with its snapshot.
    expect(Object.keys(a!)).toEqual(['id', 'state', 'mergedInto', 'snapshot', 'resource'])
    expect({ ...a! }.snapshot).toMatchObject({ type: 'thing', name: 'name a' })
    expect(structuredClone(b!).snapshot).toMatchObject({ name: 'name b' })
    expect(JSON.parse(JSON.stringify(a)).snapshot).toMatchObject({ name: 'name a' })
    a!.snapshot = { ...a!.snapshot, name: 'changed' }
    expect(a!.snapshot.name).toBe('changed')
    expect(b!.snapshot.name).toBe('name b')
    // A getter made per entity gave each its own hidden class, which outlived young collections.
    const accessorOf = (entity: object) => Object.getOwnPropertyDescriptor(entity, 'snapshot')!.get
    expect(accessorOf(a!)).toBe(accessorOf(b!))
  })

  it('are read by the hundred in one statement, those that do not exist left out, whatever the ids asked hold', async () => {
    const ids = Array.from({ length: 150 }, (_, n) => `e${n}`)
    for (const id of ids) await store().warehouse.upsert({ id, type: 'thing', name: `name ${id}` })
    const asked = [...ids.slice(0, 120), 'missing', "it's", '"]', 'e1,e2', 'é\\', ids[3]!]
    const read = await store().getEntities!(asked)
    expect(read.map((entity) => entity.id).sort()).toEqual(ids.slice(0, 120).sort())
    expect(read.find((entity) => entity.id === ids[1])?.snapshot.name).toBe(`name ${ids[1]}`)
    // The same statement again, with another number of ids.
    expect((await store().getEntities!([ids[149]!])).map((entity) => entity.id)).toEqual([ids[149]])
  })
})

describeEachStore(sqlDialects, 'stored resources', (dialect) => {
  const store = useStore(dialect)

  it('renders the resources of a store written before they were kept (migration 0004), serving the same pages', async () => {
    const db = (store() as KyselyStore).db
    await store().warehouse.upsert({ id: 'p1', type: 'person', name: 'Ada', texts: [{ renditions: [{ renditionId: `rnd_${'a'.repeat(32)}`, conversion: 'original', mime: 'text/html', filename: 'a.html' }] }] })
    await store().warehouse.upsert({ id: 'p2', type: 'person', name: 'Bob' })
    const page = async () => (await testRegistry(store()).get('/v1/entities')).text()
    const before = await page()
    // As an older version left it: no column, and the migration not run.
    await asBeforeOrganizations(db)
    await db.schema.alterTable('entities').dropColumn('resource').execute()
    await db.deleteFrom('kysely_migration' as never).where('name' as never, '=', '0004_entities_resource' as never).execute()
    await migrateToLatest(db, await resolveDialect(db, dialect.name === 'sqlite' ? 'sqlite' : 'postgres'))
    expect(await page()).toBe(before)
    const rows = await db.selectFrom('entities').select(['id', 'resource']).orderBy('id').execute()
    expect(rows.map((row) => row.resource === null)).toEqual([false, false])
    // Migration 0006 ran again over them: the kept facet counts start from the entities there are.
    expect((await store().countFacets({ qualifiers: [], fields: ['type'], limit: 50 })).facets).toEqual({ type: [{ value: 'person', count: 2 }] })
  })
})

describeEachStore(sqlDialects, 'keys from before organizations', (dialect) => {
  const store = useStore(dialect)

  it('moves the keys of a store written before organizations (migration 0005) to "default", where they keep working', async () => {
    const db = (store() as KyselyStore).db
    const legacyKey = `er_${'Qx-_'.repeat(10)}abc`
    const hash = await hashApiKey(legacyKey)
    await asBeforeOrganizations(db)
    await sql`insert into api_keys (key_hash, created_at) values (${hash}, '2026-01-01T00:00:00.000Z')`.execute(db)
    await migrateToLatest(db, await resolveDialect(db, dialect.name === 'sqlite' ? 'sqlite' : 'postgres'))
    const id = `legacy_${hash.slice(0, 10)}`
    expect(await createKeyManager(store()).listKeys()).toEqual([
      { id, org: 'default', label: null, createdAt: '2026-01-01T00:00:00.000Z', expiresAt: null, lastUsedAt: null, state: 'active' },
    ])
    expect(await store().listOrganizations()).toEqual([{ name: 'default', createdAt: '2026-01-01T00:00:00.000Z' }])
    const auth = createApiKeyAuthenticator({ store: store() })
    expect(await auth.authenticate(legacyKey, { method: 'GET', url: 'http://localhost/', headers: new Headers() })).toEqual({ id, org: 'default' })
  })
})

/** The schema as it was before migration 0005 (keys as bare hashes) and 0006 (facet counts), neither run. */
async function asBeforeOrganizations(db: KyselyStore['db']): Promise<void> {
  const sqlite = (await sql<{ version: string }>`select sqlite_version() as version`.execute(db).catch(() => null)) !== null
  if (sqlite) for (const event of ['insert', 'update', 'delete']) await sql`drop trigger ${sql.ref(`entities_facet_counts_${event}`)}`.execute(db)
  else await sql`drop function entity_registry_facet_counts() cascade`.execute(db)
  await db.schema.dropTable('facet_counts').execute()
  await db.deleteFrom('kysely_migration' as never).where('name' as never, '=', '0006_facet_counts' as never).execute()
  await db.schema.dropTable('api_keys').execute()
  await db.schema.dropTable('organizations').execute()
  await db.schema.createTable('api_keys').addColumn('key_hash', 'text', (column) => column.primaryKey()).addColumn('created_at', 'text', (column) => column.notNull()).execute()
  await db.deleteFrom('kysely_migration' as never).where('name' as never, '=', '0005_organizations_and_keys' as never).execute()
}
