import { sql, type Kysely } from 'kysely'
import type { SnapshotIds } from '../ports/warehouse.js'
import type { RegistryDatabase } from './schema.js'
import type { SqlDialect } from './sql-dialect.js'

/**
 * A full snapshot's ids in a table of the run's own (its name made here, never from input), so that
 * two runs never share one; dropped on close. Adding ids takes no writers' lock: the table is no
 * part of the feed. Each statement runs in a transaction: on PostgreSQL one outside a transaction
 * is cut at the read timeout (3 s), which counting a warehouse of millions can exceed.
 */
export async function createSnapshotIds(db: Kysely<RegistryDatabase>, dialect: SqlDialect): Promise<SnapshotIds> {
  const name = `entity_registry_seen_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
  const table = sql.table(name)
  await sql`create ${dialect.scratchTable} ${table} (id ${dialect.text} primary key)`.execute(db)
  const notNamed = sql`not exists (select 1 from ${table} where ${table}.id = entities.id)`
  const inTransaction = <T>(work: (trx: Kysely<RegistryDatabase>) => Promise<T>) => db.transaction().execute(work)
  return {
    add: (ids) => inTransaction((trx) => dialect.bulk.insertIds(trx, name, ids)),
    async countAbsent() {
      const { rows } = await inTransaction((trx) =>
        sql<{ canonical: number | string; absent: number | string }>`
          select count(*) as canonical, count(*) filter (where ${notNamed}) as absent
          from entities where state = 'canonical'`.execute(trx),
      )
      // pg returns a count (bigint) as a string.
      return { canonical: Number(rows[0]!.canonical), absent: Number(rows[0]!.absent) }
    },
    async absent(after, limit) {
      const { rows } = await inTransaction((trx) =>
        sql<{ id: string }>`
          select id from entities where state = 'canonical' and ${notNamed} ${after === null ? sql`` : sql`and id > ${after}`} order by id limit ${limit}`.execute(trx),
      )
      return rows.map((row) => row.id)
    },
    async close() {
      await sql`drop table if exists ${table}`.execute(db)
    },
  }
}
