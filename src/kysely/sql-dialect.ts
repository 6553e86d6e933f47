import type { BulkWrites } from './bulk-writes.js'
import { postgresBulkWrites } from './postgres-bulk.js'
import { sqliteBulkWrites } from './sqlite-bulk.js'
import { FEED_CHANNEL } from './postgres-notifications.js'
import { sql, type ColumnBuilderCallback, type Expression, type Kysely, type RawBuilder, type SqlBool } from 'kysely'

export type DialectName = 'sqlite' | 'postgres'

/** What differs between the SQL engines the store runs on; everything else is shared. */
export interface SqlDialect {
  name: DialectName
  /** The type of every text column: compares and orders by code point, like `compareCodePoints`. */
  text: RawBuilder<unknown>
  /** The change feed's sequence column: increasing, assigned on insert. */
  sequence: { dataType: RawBuilder<unknown>; define: ColumnBuilderCallback }
  /** Statements that open a write transaction serialized with every other writer. */
  beginWrite: RawBuilder<unknown>[]
  /**
   * Run in a write transaction that appended changes: tells other processes of the commit (null where
   * they notice it otherwise: SQLite's `data_version`).
   */
  announceChanges: RawBuilder<unknown> | null
  /** Statements that keep the query planner's statistics current, on open and after each write. */
  refreshStatistics: { onOpen: RawBuilder<unknown>[]; afterWrite: RawBuilder<unknown>[] }
  /** Whether `column`, case-folded as `foldCase` does, contains `foldedNeedle`. */
  containsFolded(column: Expression<string | null>, foldedNeedle: string): Expression<SqlBool>
  /**
   * Aggregate: the `resource` column of a page's rows, comma-separated in id order, as text or its
   * UTF-8 bytes (null for none); null where a page is cheaper read as rows (`ListEntitiesQuery.joined`
   * is then ignored).
   */
  joinedResources: RawBuilder<string | Uint8Array | null> | null
  /**
   * A page statement's bound value (a cursor's; a seek's where `hidesSeekValues`), hidden from the
   * planner. SQLite under STAT4 (better-sqlite3 is built with it; `pragma optimize` gathers it)
   * prepares a statement anew at each run that binds a value in a range on an indexed column: every
   * page after a cursor, its `hasMore` probe, its window (in a loop the deep page's statement 53 us
   * against 31). PostgreSQL makes a custom plan for values it can read, on every call.
   */
  hiddenValue(value: string): Expression<string>
  /**
   * Whether a page's seek values are hidden too, the seek shaped so that one generic plan serves
   * every value (`seekToSql`): PostgreSQL's custom plans, estimated a little cheaper, were made anew
   * on every call. SQLite makes one plan a prepared statement, and its equalities stay plain.
   */
  hidesSeekValues: boolean
  /** How a write transaction's rows are written at its end. */
  bulk: BulkWrites
  /**
   * The kind of table an import run keeps its scratch rows in (a full snapshot's ids): one that
   * writes no journal a crash must replay, and on SQLite, where the process has one connection, one
   * the database file never holds.
   */
  scratchTable: RawBuilder<unknown>
}

/** The SQLite function the store's connection must provide: JS `toLowerCase`, as `foldCase`. */
export const SQLITE_FOLD_FUNCTION = 'er_fold'

/** Key of the PostgreSQL advisory lock that serializes writers ("ER_WRITE" in ASCII). */
const WRITER_LOCK_KEY = 0x45525f5752495445n

/** ICU lowercases as JS does (full case mapping: `İ`, final sigma); libc and "C" do not. */
const ICU_COLLATION = 'und-x-icu'

const sqlite: SqlDialect = {
  name: 'sqlite',
  // BINARY collation: UTF-8 byte order, which is code point order.
  text: sql`text`,
  // AUTOINCREMENT: a sequence number is never reused, even after the newest row is deleted.
  sequence: { dataType: sql`integer`, define: (column) => column.primaryKey().autoIncrement() },
  // A deferred BEGIN would take the write lock only at the first write, after the merge checks read.
  beginWrite: [sql`begin immediate`],
  announceChanges: null,
  // Without statistics SQLite may walk a (column, id) index of a common value when another
  // qualifier's is rare: 12 ms instead of 0.3 ms a page at 1M rows. `optimize` analyzes only the
  // tables that changed size tenfold since their last analysis, so after most writes it does nothing.
  refreshStatistics: { onOpen: [sql`pragma optimize=0x10002`], afterWrite: [sql`pragma optimize`] },
  containsFolded: (column, foldedNeedle) =>
    sql<SqlBool>`instr(${sql.raw(SQLITE_FOLD_FUNCTION)}(${column}), ${foldedNeedle}) > 0`,
  // In the order the rows come from the page's subquery: one with a LIMIT is never flattened into
  // an aggregate query but run as a co-routine, which hands its rows over in its ORDER BY order (a
  // test pins this). `group_concat(... ORDER BY id)` would sort them again in a temporary b-tree,
  // costing half as much as reading the page.
  // As bytes: they are served as they are, where a string would cost decoding (slow in V8 for a
  // page with any non-ASCII text: 40 us against 23 for page 1 of the benchmark) and encoding again.
  joinedResources: sql<Uint8Array | null>`cast(group_concat(resource, ',') as blob)`,
  // `+?`, not `?`: the same value, one the planner does not read. The cursor never changes the plan
  // (each equality-filterable field's index ends in id).
  hiddenValue: (value) => sql<string>`+${value}`,
  hidesSeekValues: false,
  bulk: sqliteBulkWrites,
  // A temporary table: freed when the connection closes, however the process ends.
  scratchTable: sql`temp table`,
}

/**
 * ANALYZE of the tables pages read whose statistics are missing, or were gathered when the table had
 * a tenth or ten times its pages now (as SQLite's `optimize`): a check of two catalog rows when none
 * is. Autovacuum analyzes a table only where it is on and only once its naptime has passed: until
 * then PostgreSQL estimated the canonical entities at a few hundred rows and sorted the whole table
 * for a filtered page's window (at 100,000 entities just imported, 140 ms for a rare `name:~`
 * filter instead of 20). ANALYZE samples a fixed number of rows: about a second at any size.
 */
const ANALYZE_STALE_TABLES = sql`do $$
declare stale regclass;
begin
  for stale in
    select oid::regclass from pg_class
    where relnamespace = current_schema()::regnamespace and relname in ('entities', 'changes')
      and (reltuples < 0 or pg_relation_size(oid) / current_setting('block_size')::int not between relpages / 10 and greatest(relpages, 1) * 10)
  loop
    execute format('analyze %s', stale);
  end loop;
end $$`

function postgres(foldCollation: string): SqlDialect {
  return {
    name: 'postgres',
    text: sql`text collate "C"`,
    sequence: { dataType: sql`bigint`, define: (column) => column.primaryKey().generatedAlwaysAsIdentity() },
    // A sequence hands out numbers in call order but commits in any order; one writer at a time
    // makes seq order commit order, so a reader never sees seq N + 1 before seq N.
    // A plan for each call inside a write: the pool names its reads, and a named statement's generic
    // plan, made while a table was small, scans it whole once it is large (an import's preload of
    // 500 ids took 300 to 600 ms at 20,000 rows until autovacuum analyzed the table).
    beginWrite: [sql`begin`, sql`select pg_advisory_xact_lock(${sql.lit(WRITER_LOCK_KEY)})`, sql`set local plan_cache_mode = force_custom_plan`],
    // Delivered at commit, to every session that listens (one an instance): the schema says whose feed.
    announceChanges: sql`select pg_notify(${sql.lit(FEED_CHANNEL)}, current_schema())`,
    refreshStatistics: { onOpen: [ANALYZE_STALE_TABLES], afterWrite: [ANALYZE_STALE_TABLES] },
    containsFolded: (column, foldedNeedle) =>
      sql<SqlBool>`strpos(lower(${column} collate ${sql.id(foldCollation)}), ${foldedNeedle}) > 0`,
    // Rows: `string_agg` costs the server more than the rows (0.41 ms against 0.08 ms a page of
    // 100, in order), and node-postgres more CPU to read one long value than a hundred short ones.
    joinedResources: null,
    hiddenValue: (value) => sql<string>`(select ${value})`,
    hidesSeekValues: true,
    bulk: postgresBulkWrites,
    // Not a temporary table: the pool's next query may run on another connection, which would not
    // see it. Unlogged: no write-ahead log for rows that live one run.
    scratchTable: sql`unlogged table`,
  }
}

/** The dialect of a database, checked against what the store needs from it. */
export async function resolveDialect(db: Kysely<any>, name: DialectName): Promise<SqlDialect> {
  if (name === 'sqlite') {
    await sql`select ${sql.raw(SQLITE_FOLD_FUNCTION)}('A')`.execute(db).catch((cause: unknown) => {
      throw new Error(
        `the SQLite connection lacks the function ${SQLITE_FOLD_FUNCTION}(): call registerSqliteFunctions(database) on it first`,
        { cause },
      )
    })
    return sqlite
  }
  // A server built without ICU lacks the collation; the database's default collation then folds
  // like JS but for a few special cases under a UTF-8 locale, and only ASCII under the C locale.
  const icu = await sql`select 1 from pg_collation where collname = ${ICU_COLLATION}`.execute(db)
  return postgres(icu.rows.length > 0 ? ICU_COLLATION : 'default')
}
