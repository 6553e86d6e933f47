import { sql, type DatabaseIntrospector, type Kysely, type TableMetadata } from 'kysely'
import { Migrator, type Migration } from 'kysely/migration'
import { CONTRACT_COLUMNS } from '../contract/fields.js'
import { renderEntityResource } from '../contract/resource-json.js'
import { ENTITY_FILTER_INDEXES, PREVIOUS_CONTRACT_COLUMNS } from './schema.js'
import { facetCountsMigration } from './facet-counts.js'
import { overriding } from './overriding.js'
import { createSessionPlannedReads } from './session-planned-reads.js'
import type { SqlDialect } from './sql-dialect.js'

/** The migrations in code, so that they ship inside the bundle; names sort in the order they run. */
function migrations(dialect: SqlDialect): Record<string, Migration> {
  const text = dialect.text
  const contractColumns = Object.values(CONTRACT_COLUMNS)
  return {
    '0001_initial': {
      async up(db: Kysely<any>) {
        let entities = db.schema
          .createTable('entities')
          .addColumn('id', text, (column) => column.primaryKey())
          .addColumn('state', text, (column) => column.notNull())
          .addColumn('merged_into', text)
        for (const column of contractColumns) entities = entities.addColumn(column, text)
        await entities
          .addColumn('snapshot', text, (column) => column.notNull())
          .addColumn('private_snapshot', text, (column) => column.notNull())
          .execute()

        const canonical = sql<boolean>`state = 'canonical'`
        await db.schema.createIndex('entities_canonical_id').on('entities').column('id').where(canonical).execute()
        for (const columns of ENTITY_FILTER_INDEXES) {
          await db.schema
            .createIndex(`entities_canonical_${columns.join('_')}_id`)
            .on('entities')
            .columns([...columns, 'id'])
            .where(canonical)
            .execute()
        }

        // Narrow rows (the snapshot last): a filtered change page scans a window of them in SQL.
        let changes = db.schema
          .createTable('changes')
          .addColumn('seq', dialect.sequence.dataType, dialect.sequence.define)
          .addColumn('entity_id', text, (column) => column.notNull())
          .addColumn('change_type', text, (column) => column.notNull())
          .addColumn('changed_keys', text, (column) => column.notNull())
          .addColumn('merged_into', text)
          .addColumn('recorded_at', text, (column) => column.notNull())
        for (const column of contractColumns) changes = changes.addColumn(column, text)
        await changes.addColumn('snapshot', text, (column) => column.notNull()).execute()

        await db.schema
          .createTable('api_keys')
          .addColumn('key_hash', text, (column) => column.primaryKey())
          .addColumn('created_at', text, (column) => column.notNull())
          .execute()
      },
    },
    // `filterScope=either` matches the snapshot before a change too; older rows keep nulls there.
    '0003_changes_previous_columns': {
      async up(db: Kysely<any>) {
        for (const column of Object.values(PREVIOUS_CONTRACT_COLUMNS)) {
          await db.schema.alterTable('changes').addColumn(column, text).execute()
        }
      },
    },
    // Each canonical entity's resource, rendered when written: a list page joins them as they are.
    '0004_entities_resource': {
      async up(db: Kysely<any>) {
        await db.schema.alterTable('entities').addColumn('resource', text).execute()
        for (let after = ''; ; ) {
          const rows: { id: string; snapshot: string }[] = await db
            .selectFrom('entities')
            .select(['id', 'snapshot'])
            .where('state', '=', 'canonical')
            .where('id', '>', after)
            .orderBy('id')
            .limit(RENDER_BATCH)
            .execute()
          for (const { id, snapshot } of rows) {
            await db.updateTable('entities').set({ resource: renderEntityResource({ id, snapshot: JSON.parse(snapshot) }) }).where('id', '=', id).execute()
          }
          if (rows.length < RENDER_BATCH) break
          after = rows.at(-1)!.id
        }
      },
    },
    // Keys belong to organizations and have a lifecycle; the keys before move to `default`, with a
    // public id made from their hash (the key itself was never kept).
    '0005_organizations_and_keys': {
      async up(db: Kysely<any>) {
        await db.schema.createTable('organizations').addColumn('name', text, (column) => column.primaryKey()).addColumn('created_at', text, (column) => column.notNull()).execute()
        await db.schema.alterTable('api_keys').renameTo('api_keys_before_organizations').execute()
        await db.schema
          .createTable('api_keys')
          .addColumn('key_hash', text, (column) => column.primaryKey())
          .addColumn('id', text, (column) => column.notNull().unique())
          .addColumn('org', text, (column) => column.notNull())
          .addColumn('label', text)
          .addColumn('created_at', text, (column) => column.notNull())
          .addColumn('expires_at', text)
          .addColumn('last_used_at', text)
          .addColumn('revoked_at', text)
          .execute()
        await db.schema.createIndex('api_keys_org').on('api_keys').columns(['org', 'created_at', 'id']).execute()
        await sql`insert into organizations (name, created_at)
          select 'default', min(created_at) from api_keys_before_organizations having count(*) > 0`.execute(db)
        await sql`insert into api_keys (key_hash, id, org, created_at)
          select key_hash, 'legacy_' || substr(key_hash, 1, 10), 'default', created_at from api_keys_before_organizations`.execute(db)
        await db.schema.dropTable('api_keys_before_organizations').execute()
      },
    },
    '0006_facet_counts': {
      async up(db: Kysely<any>) {
        for (const statement of facetCountsMigration(dialect)) await statement.execute(db)
      },
    },
  }
}

/** Entities rendered a query when an older store is brought up to date. */
const RENDER_BATCH = 1000

/** Brings the schema up to date, and on PostgreSQL makes the functions of this version's planned reads (session-planned-reads.ts); runs on every open. */
export async function migrateToLatest(db: Kysely<any>, dialect: SqlDialect): Promise<void> {
  const provided = migrations(dialect)
  const migrate = async (db: Kysely<any>, schema: string | undefined) => {
    const migrator = new Migrator({
      db: schema === undefined ? db : withIntrospectionOf(db, schema),
      provider: { getMigrations: async () => provided },
      ...(schema === undefined ? {} : { migrationTableSchema: schema }),
    })
    const { error } = await migrator.migrateToLatest()
    if (error !== undefined) throw error
  }
  if (dialect.name !== 'postgres') return migrate(db, undefined)
  // On PostgreSQL, in one transaction of this store's, under a lock that ends with it. Kysely's
  // migrator would take a session advisory lock on a connection, then run its transaction: through
  // a transaction pooler (PgBouncer, RDS Proxy, Supavisor) the lock stays with a server session the
  // pooler lends on, and the next instance to start waits on it until that session ends.
  // The lock first, before the migrator makes its tables: two stores opening at once on a new
  // schema would otherwise both create them, and the second's error would end its transaction.
  await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${sql.lit(KYSELY_MIGRATION_LOCK)}::bigint)`.execute(trx)
    // Kysely looks for its migration tables in every schema unless told which: another schema's
    // tables (another app's, or another registry's) would stop it creating this schema's own.
    const schema = (await sql<{ schema: string }>`select current_schema() as schema`.execute(trx)).rows[0]?.schema
    await migrate(withMigrationLockHeld(trx), schema)
    await createSessionPlannedReads(trx, dialect)
  })
}

/** Kysely's key for its PostgreSQL migration lock: the same key, so that a migrator of an older version waits for this one and the other way round. */
const KYSELY_MIGRATION_LOCK = '3853314791062309107'

/** `trx`, which holds the migration lock until it ends: the migrator takes and lets go of none of its own. */
function withMigrationLockHeld(trx: Kysely<any>): Kysely<any> {
  const executor = trx.getExecutor()
  const adapter = overriding(overriding(executor.adapter, 'acquireMigrationLock', async () => {}), 'releaseMigrationLock', async () => {})
  return overriding(trx, 'getExecutor', () => overriding(executor, 'adapter', adapter))
}

/**
 * `db` whose introspection sees only `schema`'s tables. The Migrator asks Kysely's PostgreSQL
 * introspector whether its tables exist, and that reads every column of every schema through
 * `pg_get_serial_sequence(name)`: it fails with "schema … does not exist" when another schema is
 * dropped meanwhile, and takes seconds on a database of many schemas (kysely#1313, kysely#1706).
 */
function withIntrospectionOf(db: Kysely<any>, schema: string): Kysely<any> {
  const introspection: DatabaseIntrospector = {
    getSchemas: async () => [{ name: schema }],
    async getTables(): Promise<TableMetadata[]> {
      const { rows } = await sql<{ name: string; isView: boolean }>`
        select c.relname as name, c.relkind = 'v' as "isView"
        from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
        where n.nspname = ${schema} and c.relkind in ('r', 'v', 'p')`.execute(db)
      return rows.map((row) => ({ name: row.name, isView: row.isView, isForeign: false, columns: [], schema }))
    },
  }
  return overriding(db, 'introspection', introspection)
}
