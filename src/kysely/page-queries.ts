import { sql, type ExpressionBuilder, type Kysely } from 'kysely'
import type { seekToSql } from './gffs-to-sql.js'
import { PAGE_COLUMNS } from './rows.js'
import type { ContractColumn, RegistryDatabase } from './schema.js'

// The statements of list pages and of the feed head (kysely-store.ts), which session-planned-reads.ts compiles too.

/**
 * A LIMIT's row count as a literal (each shape's key holds it too): SQLite runs a page with a bound
 * LIMIT about twice as slow as with the number written in.
 */
export function rowsAtMost(count: number) {
  if (!Number.isSafeInteger(count) || count < 0) throw new RangeError(`a row count must be a whole number, not ${count}`)
  return sql.lit(count)
}

export type SeekSql = ReturnType<typeof seekToSql>
export type OrderedBy = { orderBy(column: ContractColumn | 'id'): OrderedBy }

/** Canonical entities the seek takes. A literal, not a parameter: the partial indexes apply only to a predicate they imply. */
export const seekingCandidates = (seekSql: SeekSql) => (eb: ExpressionBuilder<RegistryDatabase, 'entities'>) =>
  eb.and([eb('state', '=', sql.lit('canonical')), seekSql.condition])

/** In the seek index's order: with the seek's columns fixed, the id order. */
export const inSeekOrder = <Query extends OrderedBy>(seekSql: SeekSql, query: Query): Query =>
  [...seekSql.order, 'id' as const].reduce((ordered, column) => ordered.orderBy(column) as Query, query)

/** A page's rows (`size` at most) where the seek's index answers the filter exactly. */
export function selectPage(reads: Kysely<RegistryDatabase>, seekSql: SeekSql, size: number) {
  return inSeekOrder(seekSql, reads.selectFrom('entities').select(PAGE_COLUMNS).where(seekingCandidates(seekSql))).limit(rowsAtMost(size))
}

/**
 * A page of `limit` (and one row past it, which says whether more follow) with the feed head as of
 * the page: a row of its own (no id) beside the page's rows, in the same statement, so of the same
 * snapshot, and there for an empty page too. Not a column of each row: the driver reads a field a
 * row (101 of them cost `pg` 6 us of a page's 54).
 */
export function selectPageWithHead(reads: Kysely<RegistryDatabase>, seekSql: SeekSql, limit: number) {
  return reads
    .selectNoFrom([sql<string | null>`null`.as('id'), sql<string | null>`null`.as('resource'), feedHeadQuery(reads).as('head')])
    .unionAll(reads.selectFrom(selectPage(reads, seekSql, limit + 1).as('page')).select(['id', 'resource', sql<null>`null`.as('head')]))
}

/** The newest change's seq, or null for an empty feed. */
export function feedHeadQuery(db: Kysely<RegistryDatabase>) {
  return db.selectFrom('changes').select((eb) => eb.fn.max('seq').as('seq'))
}

