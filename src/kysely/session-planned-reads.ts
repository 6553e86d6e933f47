import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { sql, type Compilable, type Kysely } from 'kysely'
import type { Qualifier } from '../gffs/types.js'
import { MAX_PAGE_LIMIT } from '../http/query.js'
import { SEEKABLE_FIELDS } from './filter-plan.js'
import { seekToSql } from './gffs-to-sql.js'
import { selectPageWithHead } from './page-queries.js'
import { selectMergeEndAfterFirstHop, selectServedEntitiesAmong, selectServedEntity, SERVED_COLUMNS } from './rows.js'
import type { RegistryDatabase } from './schema.js'
import type { SqlDialect } from './sql-dialect.js'

/**
 * Reads whose plans a transaction pooler's server sessions keep: each a PL/pgSQL function in the
 * store's schema that runs the store's own statement (its text, compiled by the same builder as the
 * query shape's). Through a pooler every statement goes unnamed (postgres.ts), and PostgreSQL parses
 * and plans it on every call; PL/pgSQL keeps its statements' plans in the server session, which the
 * pooler keeps between its clients, so a call `select * from f($1)` plans only the call. Measured
 * through PgBouncer 1.18 (bench/README.md): the read after a merge's first hop (a recursive
 * statement) cost PostgreSQL 369 us of CPU unnamed, 87 as the call; a get by id 90 against 71.
 * Directly a named statement costs less still (63 and 46): there the store names its reads instead.
 *
 * A function is named by a hash of its definition: a store of another version, whose statement
 * differs, makes and calls its own beside it, and a replica has them by replication.
 */
export interface SessionPlannedRead {
  /** The statement as the store sends it (its query shape's compiled SQL). */
  text: string
  /** `select * from <function>($1, …)`: the same parameters, the same columns. */
  call: string
  /** The function's name and its `create function` statement. */
  name: string
  definition: string
}

/** `compiled`'s statement as a function whose rows have `columns` (name and type); every parameter a read takes is text. */
function plannedRead({ sql: text, parameters }: ReturnType<Compilable<unknown>['compile']>, columns: readonly string[]): SessionPlannedRead {
  const types = parameters.map(() => 'text').join(', ')
  // `use_column`: the function's output columns bear the table's column names; in its statement
  // a name is the table's column.
  const body = `\n#variable_conflict use_column\nbegin\n  return query ${text};\nend\n`
  if (body.includes('$entity_registry$')) throw new Error('a planned read cannot quote its own statement')
  const signature = `(${types}) returns table (${columns.join(', ')}) language plpgsql stable parallel safe as $entity_registry$${body}$entity_registry$`
  const name = `entity_registry_read_${bytesToHex(sha256(utf8ToBytes(signature))).slice(0, 16)}`
  const placeholders = parameters.map((_, index) => `$${index + 1}`).join(', ')
  return { text, call: `select * from ${name}(${placeholders})`, name, definition: `create function ${name}${signature}` }
}

const SERVED_ROW = SERVED_COLUMNS.map((column) => `${column} text`)
const PAGE_WITH_HEAD_ROW = ['id text', 'resource text', 'head bigint']

/**
 * The seeks a filter index answers exactly (filter-plan.ts seeks only these), each an equality of
 * one value a column: a seek's values are bound, so one statement serves every value.
 */
const INDEXED_SEEKS: Qualifier[][] = SEEKABLE_FIELDS.map((fields) => fields.map((field) => ({ kind: 'qualifier', field, op: 'eq', negated: false, values: ['value'] })))

/**
 * The hot reads of fixed statements (kysely-store.ts): a get by id, the read of a merged entity's
 * chain after its first hop, the gets by id of one batch, and the list's pages at the size the HTTP
 * API serves unless asked (the first, and those after a cursor), unfiltered or filtered by
 * equalities an index answers (`type:person jurisdiction:US-WA`). Other filtered pages are not
 * among them: their statements are as many as the filters clients send.
 */
export function sessionPlannedReads(db: Kysely<RegistryDatabase>, dialect: SqlDialect): SessionPlannedRead[] {
  const id = 'id'
  const pages = [[], ...INDEXED_SEEKS].flatMap((seek) =>
    [null, id].map((cursor) => plannedRead(selectPageWithHead(db, seekToSql(seek, cursor, dialect), MAX_PAGE_LIMIT).compile(), PAGE_WITH_HEAD_ROW)),
  )
  return [
    plannedRead(selectServedEntity(db, id).compile(), SERVED_ROW),
    plannedRead(selectMergeEndAfterFirstHop(db, id).compile(), SERVED_ROW),
    // Its array is bound as text (every parameter of a planned read is), cast in the statement.
    plannedRead(selectServedEntitiesAmong(db, id).compile(), SERVED_ROW),
    ...pages,
  ]
}

/** Makes the planned reads' functions the current schema lacks (in the migrations' transaction, under their lock). */
export async function createSessionPlannedReads(trx: Kysely<any>, dialect: SqlDialect): Promise<void> {
  const reads = sessionPlannedReads(trx, dialect)
  const { rows } = await sql<{ name: string }>`select proname as name from pg_catalog.pg_proc
    where pronamespace = current_schema()::regnamespace and proname in (${sql.join(reads.map((read) => read.name))})`.execute(trx)
  const present = new Set(rows.map((row) => row.name))
  for (const read of reads) if (!present.has(read.name)) await sql.raw(read.definition).execute(trx)
}
