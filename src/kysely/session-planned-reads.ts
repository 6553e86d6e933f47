import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import { sql, type Kysely } from 'kysely'
import { selectMergeEndAfterFirstHop, selectServedEntity, SERVED_COLUMNS } from './rows.js'
import type { RegistryDatabase } from './schema.js'

/**
 * Reads whose plans a transaction pooler's server sessions keep: each a PL/pgSQL function in the
 * store's schema that runs the store's own statement (its text, compiled by the same builder as the
 * query shape's). Through a pooler every statement goes unnamed (postgres.ts), and PostgreSQL parses
 * and plans it on every call; PL/pgSQL keeps its statements' plans in the server session, which the
 * pooler keeps between its clients, so a call `select * from f($1)` plans only the call. Measured
 * through PgBouncer 1.18 (bench/README.md): a get by id cost PostgreSQL 90 us of CPU unnamed, 71 as
 * the call; the read after a merge's first hop (a recursive statement) 369 against 87. Directly a
 * named statement costs less still (46 and 63): there the store names its reads instead.
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

/** Every id a served read takes is text; its rows are the served entity's columns, text each. */
function plannedRead(text: string, parameterCount: number): SessionPlannedRead {
  const parameters = Array.from({ length: parameterCount }, () => 'text').join(', ')
  const columns = SERVED_COLUMNS.map((column) => `${column} text`).join(', ')
  // `use_column`: the function's output columns bear the table's column names; in its statement
  // a name is the table's column.
  const body = `\n#variable_conflict use_column\nbegin\n  return query ${text};\nend\n`
  if (body.includes('$entity_registry$')) throw new Error('a planned read cannot quote its own statement')
  const signature = `(${parameters}) returns table (${columns}) language plpgsql stable parallel safe as $entity_registry$${body}$entity_registry$`
  const name = `entity_registry_read_${bytesToHex(sha256(utf8ToBytes(signature))).slice(0, 16)}`
  const placeholders = Array.from({ length: parameterCount }, (_, index) => `$${index + 1}`).join(', ')
  return { text, call: `select * from ${name}(${placeholders})`, name, definition: `create function ${name}${signature}` }
}

/**
 * The hot point reads (kysely-store.ts): a get by id, and the read of a merged entity's chain after
 * its first hop. List pages are not among them: their shapes are as many as the filters, cursors
 * and page sizes clients send, each LIMIT written in.
 */
export function sessionPlannedReads(db: Kysely<RegistryDatabase>): SessionPlannedRead[] {
  return [selectServedEntity(db, 'id').compile(), selectMergeEndAfterFirstHop(db, 'id').compile()].map((compiled) =>
    plannedRead(compiled.sql, compiled.parameters.length),
  )
}

/** Makes the planned reads' functions the current schema lacks (in the migrations' transaction, under their lock). */
export async function createSessionPlannedReads(trx: Kysely<any>): Promise<void> {
  const reads = sessionPlannedReads(trx)
  const { rows } = await sql<{ name: string }>`select proname as name from pg_catalog.pg_proc
    where pronamespace = current_schema()::regnamespace and proname in (${sql.join(reads.map((read) => read.name))})`.execute(trx)
  const present = new Set(rows.map((row) => row.name))
  for (const read of reads) if (!present.has(read.name)) await sql.raw(read.definition).execute(trx)
}
