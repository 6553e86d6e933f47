import { sql, type Kysely } from 'kysely'
import { decodeChangeId, encodeChangeId } from '../contract/change-id.js'
import type { ApiKeyStore } from '../ports/auth.js'
import type { ChangePage, EntityPage, EntityStore, ListChangesQuery, ListEntitiesQuery } from '../ports/entity-store.js'
import type { Warehouse } from '../ports/warehouse.js'
import { createWarehouse } from '../warehouse/operations.js'
import { qualifiersToSql } from './gffs-to-sql.js'
import { createKyselyWarehouseBackend } from './kysely-warehouse-backend.js'
import { migrateToLatest } from './migrations.js'
import { findEntity, selectChanges, selectEntities, toStoredChange, toStoredEntity } from './rows.js'
import type { RegistryDatabase } from './schema.js'
import { resolveDialect, type DialectName } from './sql-dialect.js'

export interface KyselyStoreOptions {
  /** A SQLite connection needs `registerSqliteFunctions` first (createSqliteStore does it). */
  db: Kysely<any>
  dialect: DialectName
}

/** Every store port over one SQL database. */
export interface KyselyStore extends EntityStore, ApiKeyStore {
  warehouse: Warehouse
  db: Kysely<RegistryDatabase>
  /** Destroys `db`: closes the SQLite or PGlite database, ends the pg pool. */
  close(): Promise<void>
}

/**
 * The store over a Kysely instance made for it alone, which it destroys if opening fails (the
 * factories for SQLite, PostgreSQL and PGlite use this).
 */
export async function createOwningStore(db: Kysely<any>, dialect: DialectName): Promise<KyselyStore> {
  try {
    return await createKyselyStore({ db, dialect })
  } catch (error) {
    await db.destroy()
    throw error
  }
}

/** The store over a Kysely instance; brings its schema up to date first. */
export async function createKyselyStore(options: KyselyStoreOptions): Promise<KyselyStore> {
  const db = options.db as Kysely<RegistryDatabase>
  const dialect = await resolveDialect(db, options.dialect)
  await migrateToLatest(db, dialect)
  for (const statement of dialect.refreshStatistics.onOpen) await statement.execute(db)

  return {
    db,
    warehouse: createWarehouse(createKyselyWarehouseBackend(db, dialect)),
    close: () => db.destroy(),

    async listEntities({ filter, after, limit }: ListEntitiesQuery): Promise<EntityPage> {
      const rows = await selectEntities(db)
        .where((eb) =>
          eb.and([
            // A literal, not a parameter: the partial indexes apply only to a predicate they imply.
            eb('state', '=', sql.lit('canonical')),
            qualifiersToSql(filter?.qualifiers ?? [], dialect),
            ...(after === null ? [] : [eb('id', '>', after)]),
          ]),
        )
        .orderBy('id')
        .limit(limit + 1)
        .execute()
      return { entities: rows.slice(0, limit).map(toStoredEntity), hasMore: rows.length > limit }
    },

    getEntity: (id) => findEntity(db, id),

    async listChanges({ filter, after, limit, window }: ListChangesQuery): Promise<ChangePage> {
      const start = after === null ? 0 : decodeChangeId(after) ?? 0
      const { windowEnd, head } = await scanWindow(db, start, window)
      const rows =
        windowEnd === null
          ? []
          : await selectChanges(db)
              .where((eb) =>
                eb.and([
                  eb('seq', '>', start),
                  eb('seq', '<=', windowEnd),
                  qualifiersToSql(filter.qualifiers, dialect),
                ]),
              )
              .orderBy('seq')
              .limit(limit)
              .execute()
      // A full page ends the scan at its last match; otherwise the whole window was scanned.
      const lastScanned = rows.length === limit ? Number(rows.at(-1)?.seq ?? start) : windowEnd ?? start
      return {
        changes: rows.map(toStoredChange),
        cursor: lastScanned > 0 ? encodeChangeId(lastScanned) : after,
        hasMore: head !== null && head > lastScanned,
      }
    },

    async feedHead() {
      const { seq } = await db
        .selectFrom('changes')
        .select((eb) => eb.fn.max('seq').as('seq'))
        .executeTakeFirstOrThrow()
      return seq === null ? null : encodeChangeId(Number(seq))
    },

    isChangeId: (id) => decodeChangeId(id) !== null,

    async hasKeyHash(hash) {
      const row = await db.selectFrom('api_keys').select('key_hash').where('key_hash', '=', hash).executeTakeFirst()
      return row !== undefined
    },

    async addKeyHash(hash) {
      await db
        .insertInto('api_keys')
        .values({ key_hash: hash, created_at: new Date().toISOString() })
        .onConflict((conflict) => conflict.column('key_hash').doNothing())
        .execute()
    },

    async countKeys() {
      const { count } = await db
        .selectFrom('api_keys')
        .select((eb) => eb.fn.countAll().as('count'))
        .executeTakeFirstOrThrow()
      return Number(count)
    },
  }
}

/** The seq of the last of the next `window` records after `start`, and of the newest record. */
async function scanWindow(
  db: Kysely<RegistryDatabase>,
  start: number,
  window: number,
): Promise<{ windowEnd: number | null; head: number | null }> {
  const row = await db
    .selectNoFrom((eb) => [
      eb
        .selectFrom(
          eb.selectFrom('changes').select('seq').where('seq', '>', start).orderBy('seq').limit(window).as('scanned'),
        )
        .select((scanned) => scanned.fn.max('seq').as('seq'))
        .as('windowEnd'),
      eb
        .selectFrom('changes')
        .select((changes) => changes.fn.max('seq').as('seq'))
        .as('head'),
    ])
    .executeTakeFirstOrThrow()
  // `pg` returns a bigint as a string.
  const seq = (value: string | number | bigint | null) => (value === null ? null : Number(value))
  return { windowEnd: seq(row.windowEnd), head: seq(row.head) }
}
