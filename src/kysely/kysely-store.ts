import { sql, type ExpressionBuilder, type Kysely } from 'kysely'
import { decodeChangeId, encodeChangeId } from '../contract/change-id.js'
import type { ChangePage, EntityPage, ListChangesQuery, ListEntitiesQuery } from '../ports/entity-store.js'
import type { RegistryStore } from '../ports/store.js'
import { createWarehouse } from '../warehouse/operations.js'
import { planFilter, windowFor } from './filter-plan.js'
import { qualifiersToSql } from './gffs-to-sql.js'
import { createKyselyWarehouseBackend } from './kysely-warehouse-backend.js'
import { migrateToLatest } from './migrations.js'
import { findEntity, selectChanges, selectEntities, toStoredChange, toStoredEntity } from './rows.js'
import { PREVIOUS_CONTRACT_COLUMNS, type RegistryDatabase } from './schema.js'
import { resolveDialect, type DialectName } from './sql-dialect.js'

/** Settings every Kysely store takes. */
export interface StoreTuning {
  /**
   * Candidate rows one filtered list request checks at most (default 10,000; fewer for costly
   * filters). Bounds every request's cost: a sparse filter answers short pages that move past it.
   */
  listWindow?: number
}

export interface KyselyStoreOptions<DB = unknown> extends StoreTuning {
  /**
   * Your Kysely instance, whatever its database type: the store adds tables of its own beside yours.
   * A SQLite connection needs `registerSqliteFunctions` first (createSqliteStore does it).
   */
  db: Kysely<DB>
  dialect: DialectName
}

/** Every store port over one SQL database; `close()` destroys `db` (the SQLite or PGlite database, the pg pool). */
export interface KyselyStore extends RegistryStore {
  db: Kysely<RegistryDatabase>
}

/**
 * The store over a Kysely instance made for it alone, which it destroys if opening fails (the
 * factories for SQLite, PostgreSQL and PGlite use this).
 */
export async function createOwningStore<DB>(db: Kysely<DB>, dialect: DialectName, tuning: StoreTuning = {}): Promise<KyselyStore> {
  try {
    return await createKyselyStore({ ...tuning, db, dialect })
  } catch (error) {
    await db.destroy()
    throw error
  }
}

/** The store over a Kysely instance; brings its schema up to date first. */
export async function createKyselyStore<DB>(options: KyselyStoreOptions<DB>): Promise<KyselyStore> {
  const db = options.db as unknown as Kysely<RegistryDatabase>
  const maxListWindow = options.listWindow ?? 10_000
  const dialect = await resolveDialect(db, options.dialect)
  await migrateToLatest(db, dialect)
  for (const statement of dialect.refreshStatistics.onOpen) await statement.execute(db)

  return {
    db,
    warehouse: createWarehouse(createKyselyWarehouseBackend(db, dialect)),
    close: () => db.destroy(),

    async listEntities({ qualifiers, after, limit }: ListEntitiesQuery): Promise<EntityPage> {
      const plan = planFilter(qualifiers, maxListWindow)
      // A literal, not a parameter: the partial indexes apply only to a predicate they imply.
      const candidates = (eb: ExpressionBuilder<RegistryDatabase, 'entities'>) =>
        eb.and([eb('state', '=', sql.lit('canonical')), qualifiersToSql(plan.seek, dialect), ...(after === null ? [] : [eb('id', '>', after)])])
      if (plan.residual.length === 0) {
        // The index answers exactly: a page reads only the rows it returns.
        const rows = await selectEntities(db).where(candidates).orderBy('id').limit(limit + 1).execute()
        const entities = rows.slice(0, limit).map(toStoredEntity)
        return { entities, hasMore: rows.length > limit, cursor: entities.at(-1)?.id ?? null }
      }
      const window = await db
        .selectFrom((eb) => eb.selectFrom('entities').select('id').where(candidates).orderBy('id').limit(plan.window).as('window'))
        .select((eb) => [eb.fn.countAll<number | string>().as('scanned'), eb.fn.max('id').as('last')])
        .executeTakeFirstOrThrow()
      if (window.last === null) return { entities: [], hasMore: false, cursor: after }
      const rows = await selectEntities(db)
        .where((eb) => eb.and([candidates(eb), eb('id', '<=', window.last!), qualifiersToSql(plan.residual, dialect)]))
        .orderBy('id')
        .limit(limit + 1)
        .execute()
      const entities = rows.slice(0, limit).map(toStoredEntity)
      if (rows.length > limit) return { entities, hasMore: true, cursor: entities.at(-1)!.id }
      // The whole window was checked: the next page starts after it, whether or not it matched.
      const windowFull = Number(window.scanned) === plan.window
      return { entities, hasMore: windowFull, cursor: windowFull ? window.last : (entities.at(-1)?.id ?? null) }
    },

    getEntity: (id) => findEntity(db, id),

    async listChanges({ qualifiers, after, limit, window: maxWindow, scope = 'after' }: ListChangesQuery): Promise<ChangePage> {
      // Every qualifier is checked row by row here: the window shrinks as the filter costs more.
      const window = windowFor(qualifiers, maxWindow, { passes: scope === 'either' ? 2 : 1 })
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
                  scope === 'either'
                    ? eb.or([qualifiersToSql(qualifiers, dialect), qualifiersToSql(qualifiers, dialect, PREVIOUS_CONTRACT_COLUMNS)])
                    : qualifiersToSql(qualifiers, dialect),
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
