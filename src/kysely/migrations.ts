import { sql, type Kysely } from 'kysely'
import { Migrator, type Migration } from 'kysely/migration'
import { CONTRACT_COLUMNS, type ContractColumn } from './schema.js'
import type { SqlDialect } from './sql-dialect.js'

/**
 * Equality-filterable columns that get a `(column, id)` index over canonical entities, so that a
 * filtered keyset page reads only matching rows; `[type, jurisdiction]` serves the common pair.
 */
const ENTITY_FILTER_INDEXES: readonly (readonly ContractColumn[])[] = [
  ['type'],
  ['jurisdiction'],
  ['status'],
  ['local_type'],
  ['authority'],
  ['type', 'jurisdiction'],
]

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
  }
}

/** Brings the schema up to date; runs on every open. */
export async function migrateToLatest(db: Kysely<any>, dialect: SqlDialect): Promise<void> {
  const provided = migrations(dialect)
  const migrator = new Migrator({ db, provider: { getMigrations: async () => provided } })
  const { error } = await migrator.migrateToLatest()
  if (error !== undefined) throw error
}
