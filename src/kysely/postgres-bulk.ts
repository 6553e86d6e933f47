import { CompiledQuery, type Kysely } from 'kysely'
import { CHANGE_WRITE_COLUMNS, ENTITY_WRITE_COLUMNS, updatedColumns, type BulkWrites, type EntityWrite } from './bulk-writes.js'
import type { RegistryDatabase } from './schema.js'

/**
 * One statement a table whatever the number of rows: each column goes as one array parameter and
 * `unnest` turns them back into rows. One round trip, where a statement a row waited for the server
 * on each. Not COPY: it needs no other package than `pg`, runs on PGlite too, and writes into the
 * tables themselves with `on conflict`, where COPY needs a staging table and a second statement.
 */
export const postgresBulkWrites: BulkWrites = {
  async writeRows(connection, { entities, keepingPrivate, changes }) {
    // Each statement goes out before the next is built: the server writes the entities while the
    // change rows are turned into parameters (a fresh import's process was half idle, waiting).
    const sent: Promise<unknown>[] = []
    const send = async (statement: string, parameters: string[]) => {
      const result = connection.executeQuery(CompiledQuery.raw(statement, parameters))
      // Observed below, after the next statements are sent: not an unhandled rejection meanwhile.
      result.catch(() => undefined)
      sent.push(result)
      await new Promise(setImmediate)
    }
    if (entities.length > 0) await send(...upsertEntities(entities, false))
    if (keepingPrivate.length > 0) await send(...upsertEntities(keepingPrivate, true))
    if (changes.length > 0) {
      // Ordered by position: identity values are drawn as the ordered rows are inserted.
      await send(
        `insert into changes (${CHANGE_WRITE_COLUMNS}) select ${CHANGE_WRITE_COLUMNS.map((column) => `r.${column}`)} from unnest(${CHANGE_WRITE_COLUMNS.map((_, index) => `$${index + 1}::text[]`)}) with ordinality as r(${CHANGE_WRITE_COLUMNS}, position) order by r.position`,
        CHANGE_WRITE_COLUMNS.map((column) => textArray(changes, column)),
      )
    }
    // The first statement to fail is the cause; those after it fail because it did.
    const failed = (await Promise.allSettled(sent)).find((result) => result.status === 'rejected')
    if (failed) throw failed.reason
  },
  async insertIds(connection, table, ids) {
    if (ids.length === 0) return
    await connection.executeQuery(CompiledQuery.raw(`insert into ${table} (id) select unnest($1::text[]) on conflict (id) do nothing`, [textArray(ids.map((id) => ({ id })), 'id')]))
  },
}

function upsertEntities(rows: EntityWrite[], keepPrivate: boolean): [string, string[]] {
  const set = updatedColumns(keepPrivate).map((column) => `${column} = excluded.${column}`)
  return [
    `insert into entities (${ENTITY_WRITE_COLUMNS}) select * from unnest(${ENTITY_WRITE_COLUMNS.map((_, index) => `$${index + 1}::text[]`)}) on conflict (id) do update set ${set}`,
    ENTITY_WRITE_COLUMNS.map((column) => textArray(rows, column)),
  ]
}

const NEEDS_ESCAPE = /["\\]/
const ESCAPED = /["\\]/g

/**
 * A column of rows as a PostgreSQL array literal of text (null as NULL), built here: pg's own
 * conversion of JS arrays (two replaces an element, a string grown by each) was 5% of a fresh
 * import's time. Joined from pieces: one flat string, no intermediate one an element.
 */
export function textArray<Row>(rows: readonly Row[], column: keyof Row): string {
  const pieces: string[] = ['{']
  for (let index = 0; index < rows.length; index++) {
    const value = rows[index]![column] as string | null | undefined
    if (index > 0) pieces.push(',')
    if (value == null) pieces.push('NULL')
    else pieces.push('"', NEEDS_ESCAPE.test(value) ? value.replace(ESCAPED, '\\$&') : value, '"')
  }
  pieces.push('}')
  return pieces.join('')
}
