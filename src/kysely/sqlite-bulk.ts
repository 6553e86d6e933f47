import { CompiledQuery, type Kysely } from 'kysely'
import { CHANGE_WRITE_COLUMNS, ENTITY_WRITE_COLUMNS, updatedColumns, type BulkWrites } from './bulk-writes.js'
import type { RegistryDatabase } from './schema.js'

/**
 * Multi-row INSERTs of at most 256 rows (24 columns: 6,144 parameters of SQLite's 32,766), in
 * chunks of powers of two: at most nine statement texts a table, all kept prepared by the store's
 * statement cache.
 */
const LARGEST_CHUNK = 256

export const sqliteBulkWrites: BulkWrites = {
  async writeRows(connection, { entities, keepingPrivate, changes }) {
    for (const [rows, keepPrivate] of [[entities, false], [keepingPrivate, true]] as const) {
      const set = updatedColumns(keepPrivate).map((column) => `${column} = excluded.${column}`)
      await inChunks(connection, rows, ENTITY_WRITE_COLUMNS, (values) => `insert into entities (${ENTITY_WRITE_COLUMNS}) values ${values} on conflict (id) do update set ${set}`)
    }
    await inChunks(connection, changes, CHANGE_WRITE_COLUMNS, (values) => `insert into changes (${CHANGE_WRITE_COLUMNS}) values ${values}`)
  },
  async insertIds(connection, table, ids) {
    await inChunks(connection, ids.map((id) => ({ id })), ['id'], (values) => `insert into ${table} (id) values ${values} on conflict (id) do nothing`)
  },
}

async function inChunks<Row>(
  connection: Kysely<RegistryDatabase>,
  rows: Row[],
  columns: readonly (keyof Row & string)[],
  statement: (values: string) => string,
): Promise<void> {
  const placeholders = `(${columns.map(() => '?')})`
  for (let start = 0; start < rows.length; ) {
    let size = LARGEST_CHUNK
    while (size > rows.length - start) size /= 2
    const parameters: unknown[] = []
    for (const row of rows.slice(start, start + size)) for (const column of columns) parameters.push(row[column] ?? null)
    await connection.executeQuery(CompiledQuery.raw(statement(Array(size).fill(placeholders).join(',')), parameters))
    start += size
  }
}
