import { sql, type Kysely } from 'kysely'
import type { WarehouseBackend, WarehouseTransaction } from '../ports/warehouse-backend.js'
import { changeRow, entityRow, findEntity } from './rows.js'
import type { RegistryDatabase } from './schema.js'
import type { SqlDialect } from './sql-dialect.js'

/**
 * The warehouse's write primitive over Kysely. Each transaction holds one connection and begins
 * with the dialect's serializing statements, so that change records commit in `seq` order.
 */
export function createKyselyWarehouseBackend(db: Kysely<RegistryDatabase>, dialect: SqlDialect): WarehouseBackend {
  return {
    transaction: <T>(work: (tx: WarehouseTransaction) => Promise<T>) =>
      // Kysely's transaction() cannot begin IMMEDIATE on SQLite, so begin and end it here.
      db.connection().execute(async (connection) => {
        const result = await inTransaction(connection, dialect, work)
        // The write has committed: a failure to refresh statistics must not report it as failed.
        for (const statement of dialect.refreshStatistics.afterWrite) {
          await statement.execute(connection).catch(() => undefined)
        }
        return result
      }),
  }
}

async function inTransaction<T>(
  connection: Kysely<RegistryDatabase>,
  dialect: SqlDialect,
  work: (tx: WarehouseTransaction) => Promise<T>,
): Promise<T> {
  try {
    for (const statement of dialect.beginWrite) await statement.execute(connection)
    const result = await work(warehouseTransaction(connection))
    await sql`commit`.execute(connection)
    return result
  } catch (error) {
    // The error that ended the transaction is the one to report, not a failed rollback's
    // (SQLite has already rolled back after some errors; a broken connection cannot).
    await sql`rollback`.execute(connection).catch(() => undefined)
    throw dialect.writeError(error)
  }
}

function warehouseTransaction(connection: Kysely<RegistryDatabase>): WarehouseTransaction {
  return {
    getEntity: (id) => findEntity(connection, id),

    async putEntity(entity, privateSnapshot) {
      const { id, ...columns } = entityRow(entity)
      const update =
        privateSnapshot === undefined ? columns : { ...columns, private_snapshot: JSON.stringify(privateSnapshot) }
      await connection
        .insertInto('entities')
        .values({ id, private_snapshot: '{}', ...update })
        .onConflict((conflict) => conflict.column('id').doUpdateSet(update))
        .execute()
    },

    async appendChange(change) {
      await connection.insertInto('changes').values(changeRow(change)).execute()
    },
  }
}
