import { sql, type Kysely, type Selectable } from 'kysely'
import type { StoredEntity } from '../contract/entity.js'
import type { WarehouseBackend, WarehouseTransaction } from '../ports/warehouse-backend.js'
import type { ChangeWrite, EntityWrite } from './bulk-writes.js'
import { changeRow, entityRow, toStoredEntity } from './rows.js'
import { createSnapshotIds } from './snapshot-ids.js'
import { asStoreError } from './store-errors.js'
import type { EntitiesTable, RegistryDatabase } from './schema.js'
import type { SqlDialect } from './sql-dialect.js'

/**
 * The warehouse's write primitive over Kysely. Each transaction holds one connection and begins
 * with the dialect's serializing statements, so that change records commit in `seq` order.
 * `onCommit`: called after each commit (this process's waiting requests hear of it at once).
 */
export function createKyselyWarehouseBackend(db: Kysely<RegistryDatabase>, dialect: SqlDialect, onCommit: () => void = () => {}): WarehouseBackend {
  return {
    transaction: <T>(work: (tx: WarehouseTransaction) => Promise<T>) =>
      // Kysely's transaction() cannot begin IMMEDIATE on SQLite, so begin and end it here.
      db.connection().execute(async (connection) => {
        const result = await inTransaction(connection, dialect, work)
        onCommit()
        // The write has committed: a failure to refresh statistics must not report it as failed.
        for (const statement of dialect.refreshStatistics.afterWrite) {
          await statement.execute(connection).catch(() => undefined)
        }
        return result
      }),
    snapshotIds: () => createSnapshotIds(db, dialect),
  }
}

async function inTransaction<T>(
  connection: Kysely<RegistryDatabase>,
  dialect: SqlDialect,
  work: (tx: WarehouseTransaction) => Promise<T>,
): Promise<T> {
  try {
    for (const statement of dialect.beginWrite) await statement.execute(connection)
    const tx = warehouseTransaction(connection, dialect)
    const result = await work(tx)
    await tx.write()
    await sql`commit`.execute(connection)
    return result
  } catch (error) {
    // The error that ended the transaction is the one to report, not a failed rollback's
    // (SQLite has already rolled back after some errors; a broken connection cannot). The stores
    // this package opens report the database away from every statement; a Kysely instance given to
    // createKyselyStore has its writes' failures reported so here.
    await sql`rollback`.execute(connection).catch(() => undefined)
    throw asStoreError(error)
  }
}

/** Ids a preload query takes: always this many (the last repeated), so that it is one statement text. */
const PRELOAD_CHUNK = 500

/** What a write compares with: the stored row's written columns. */
const STORED_COLUMNS = ['id', 'state', 'merged_into', 'snapshot', 'private_snapshot'] as const
type StoredRow = Selectable<Pick<EntitiesTable, (typeof STORED_COLUMNS)[number]>>

/**
 * Reads go to the database once an entity (or a batch of them, preloaded) and are kept; writes are
 * kept, the last one an entity, and written by `write()` at the end in a few statements. Nothing
 * else writes meanwhile: the transaction holds the writers' lock.
 */
function warehouseTransaction(connection: Kysely<RegistryDatabase>, dialect: SqlDialect): WarehouseTransaction & { write(): Promise<void> } {
  /** Entities asked for or written so far; null: none has that id. */
  const known = new Map<string, StoredEntity | null>()
  /**
   * The stored rows read, as text (null: none has that id): a write that would store the same is
   * left out. An entity is made of its row only when asked for: a line that repeats the stored
   * record needs none.
   */
  const stored = new Map<string, StoredRow | null>()
  /** The row each written entity gets; `keepPrivate` when its stored private snapshot stays. */
  const entityWrites = new Map<string, { row: EntityWrite; keepPrivate: boolean }>()
  const changeRows: ChangeWrite[] = []
  const remember = (ids: string[], rows: StoredRow[]) => {
    for (const id of ids) stored.set(id, null)
    for (const row of rows) stored.set(row.id, row)
  }
  return {
    async getEntity(id) {
      const entity = known.get(id)
      if (entity !== undefined) return entity
      if (!stored.has(id)) remember([id], await connection.selectFrom('entities').select(STORED_COLUMNS).where('id', '=', id).execute())
      const row = stored.get(id)!
      const read = row === null ? null : toStoredEntity(row)
      known.set(id, read)
      return read
    },

    async preload(ids) {
      const unknown = ids.filter((id) => !known.has(id) && !stored.has(id))
      for (let start = 0; start < unknown.length; start += PRELOAD_CHUNK) {
        const chunk = unknown.slice(start, start + PRELOAD_CHUNK)
        const padded = chunk.concat(Array<string>(PRELOAD_CHUNK - chunk.length).fill(chunk.at(-1)!))
        remember(chunk, await connection.selectFrom('entities').select(STORED_COLUMNS).where('id', 'in', padded).execute())
      }
    },

    async storedRecord(id) {
      // Only as stored: an entity written earlier in this transaction may differ from its row.
      const row = stored.get(id)
      return row == null || row.state !== 'canonical' || entityWrites.has(id) ? undefined : row.private_snapshot
    },

    async putEntity(entity, privateSnapshot) {
      known.set(entity.id, entity)
      const earlier = entityWrites.get(entity.id)
      const keepPrivate = privateSnapshot === undefined && (earlier?.keepPrivate ?? true)
      const private_snapshot = privateSnapshot === undefined ? (earlier?.row.private_snapshot ?? '{}') : JSON.stringify(privateSnapshot)
      const row = stored.get(entity.id) ?? undefined
      // An unchanged record (most of a nightly dump) costs a comparison, not a write.
      const unchanged =
        earlier === undefined &&
        row !== undefined &&
        row.state === entity.state &&
        row.merged_into === entity.mergedInto &&
        (keepPrivate || row.private_snapshot === private_snapshot) &&
        row.snapshot === JSON.stringify(entity.snapshot)
      if (!unchanged) entityWrites.set(entity.id, { row: { ...entityRow(entity), private_snapshot }, keepPrivate })
    },

    async appendChange(change) {
      changeRows.push(changeRow(change))
    },

    async write() {
      const writes = [...entityWrites.values()]
      await dialect.bulk.writeRows(connection, {
        entities: writes.filter((write) => !write.keepPrivate).map((write) => write.row),
        keepingPrivate: writes.filter((write) => write.keepPrivate).map((write) => write.row),
        changes: changeRows,
      })
      if (changeRows.length > 0 && dialect.announceChanges !== null) await dialect.announceChanges.execute(connection)
    },
  }
}
