import { CompiledQuery } from 'kysely'
import { CHANGE_WRITE_COLUMNS, ENTITY_WRITE_COLUMNS, updatedColumns, type BulkWrites } from './bulk-writes.js'

/**
 * One statement a table whatever the number of rows: each column goes as one array parameter and
 * `unnest` turns them back into rows. One round trip, where a statement a row waited for the server
 * on each. Not COPY: it needs no other package than `pg`, runs on PGlite too, and writes into the
 * tables themselves with `on conflict`, where COPY needs a staging table and a second statement.
 */
export const postgresBulkWrites: BulkWrites = {
  async upsertEntities(connection, rows, keepPrivate) {
    if (rows.length === 0) return
    const set = updatedColumns(keepPrivate).map((column) => `${column} = excluded.${column}`)
    await connection.executeQuery(
      CompiledQuery.raw(
        `insert into entities (${ENTITY_WRITE_COLUMNS}) select * from unnest(${ENTITY_WRITE_COLUMNS.map((_, index) => `$${index + 1}::text[]`)}) on conflict (id) do update set ${set}`,
        ENTITY_WRITE_COLUMNS.map((column) => rows.map((row) => row[column] ?? null)),
      ),
    )
  },
  async insertChanges(connection, rows) {
    if (rows.length === 0) return
    // Ordered by position: identity values are drawn as the ordered rows are inserted.
    await connection.executeQuery(
      CompiledQuery.raw(
        `insert into changes (${CHANGE_WRITE_COLUMNS}) select ${CHANGE_WRITE_COLUMNS.map((column) => `r.${column}`)} from unnest(${CHANGE_WRITE_COLUMNS.map((_, index) => `$${index + 1}::text[]`)}) with ordinality as r(${CHANGE_WRITE_COLUMNS}, position) order by r.position`,
        CHANGE_WRITE_COLUMNS.map((column) => rows.map((row) => row[column] ?? null)),
      ),
    )
  },
  async insertIds(connection, table, ids) {
    if (ids.length === 0) return
    await connection.executeQuery(CompiledQuery.raw(`insert into ${table} (id) select unnest($1::text[]) on conflict (id) do nothing`, [ids]))
  },
}
