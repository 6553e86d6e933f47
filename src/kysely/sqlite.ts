import { Kysely, SqliteDialect, SqliteDriver, type SqliteDatabase, type SqliteDialectConfig, type SqliteStatement } from 'kysely'
import { foldCase } from '../gffs/evaluate.js'
import { createOwningStore, type KyselyStore, type StoreTuning } from './kysely-store.js'
import type { ImmediateRead } from './query-shapes.js'
import { SQLITE_FOLD_FUNCTION } from './sql-dialect.js'
import { setNewest } from '../bounded-map.js'
import { asStoreError } from './store-errors.js'
import { sqliteCommitNotifier } from './sqlite-commits.js'

export interface SqliteStoreOptions extends StoreTuning {
  /** A database file (created when missing), or `:memory:`. */
  file: string
}

/**
 * The embedded default: a SQLite file in WAL mode (other processes read while one writes). Within
 * the process, reads and writes share the one connection. On Node 20 and 22 it is better-sqlite3;
 * under Bun, Deno and Node 24 or newer the runtime's built-in `node:sqlite`: better-sqlite3 loads on
 * neither Bun (which refuses it) nor Deno (it is not a Node-API module, the only kind Deno loads),
 * and on Node 24 its 12.x releases abort the process (`Assertion failed: (env) != nullptr` as a
 * statement or database is collected; seen in this project's Node 24 test runs, and reported
 * upstream without a fix).
 */
export async function createSqliteStore({ file, ...tuning }: SqliteStoreOptions): Promise<KyselyStore> {
  const database = await openSqliteConnection(file)
  // Another process's writer holds the lock for one transaction at a time: wait for it, but
  // bounded (the wait blocks the whole process); past it, a statement fails as the store away.
  database.exec(`pragma busy_timeout = ${BUSY_TIMEOUT_MS}`)
  database.exec('pragma journal_mode = WAL')
  // In WAL mode NORMAL stays consistent after a crash and may lose only the last commits on power loss.
  database.exec('pragma synchronous = NORMAL')
  registerSqliteFunctions(database)
  const dialect = new ConnectionUseDialect({ database: withStatementCache(database) })
  // A database in memory is this connection's alone: no other process commits to it.
  const commits = file === ':memory:' || file === '' ? null : () => sqliteCommitNotifier(file, openSqliteConnection)
  return createOwningStore(new Kysely({ dialect }), 'sqlite', tuning, { db: dialect.readNow }, commits)
}

/**
 * Kysely's SQLite dialect, whose driver knows when a query or a transaction holds the one
 * connection, so that a read can run at once when none does: a statement, not a query through
 * Kysely's executor, its connection lock and their promises (a get by id over HTTP spent 20 to 40 us
 * a request in that, in-process 4 us; bench/README.md). While the connection is held, the read waits
 * its turn through Kysely as before, so it never sees a transaction's uncommitted writes.
 */
class ConnectionUseDialect extends SqliteDialect {
  readonly #driver: ConnectionUseDriver
  readonly #database: SqliteDatabase

  constructor(config: SqliteDialectConfig & { database: SqliteDatabase }) {
    super(config)
    this.#database = config.database
    this.#driver = new ConnectionUseDriver(config)
  }

  override createDriver(): SqliteDriver {
    return this.#driver
  }

  /** The rows of a read-only statement, run now; null while the connection is held or closed. */
  readonly readNow: ImmediateRead = (sql, parameters) => (this.#driver.idle ? (this.#database.prepare(sql).all(parameters) as unknown[]) : null)
}

class ConnectionUseDriver extends SqliteDriver {
  #held = 0
  #destroyed = false

  /** Whether no query or transaction holds the connection and it is open. */
  get idle(): boolean {
    return this.#held === 0 && !this.#destroyed
  }

  override async acquireConnection() {
    const connection = await super.acquireConnection()
    this.#held++
    return connection
  }

  override async releaseConnection() {
    this.#held--
    await super.releaseConnection()
  }

  override async destroy() {
    this.#destroyed = true
    await super.destroy()
  }
}

/**
 * How long a statement waits for another connection's lock. In WAL mode reads never wait (but for
 * a connection in exclusive locking mode); a write waits for the writer before it, which holds the
 * lock for one import batch (tens of ms). One bound for both: better-sqlite3 waits synchronously,
 * so a longer wait for writes would stall every request of a process that also serves.
 */
const BUSY_TIMEOUT_MS = 3000

/** What this store needs of a SQLite connection: better-sqlite3's and `node:sqlite`'s alike. */
interface SqliteConnection extends SqliteFunctionHost {
  exec(sql: string): unknown
  prepare(sql: string): SqliteStatement
  close(): unknown
}

const nodeMajor = Number((globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node?.split('.')[0] ?? 0)
const useNodeSqlite = 'Bun' in globalThis || 'Deno' in globalThis || nodeMajor >= 24

async function openSqliteConnection(file: string): Promise<SqliteConnection> {
  if (!useNodeSqlite) {
    // Loaded on demand, so that a PostgreSQL deployment never loads the native module; and past
    // bundlers, so that an application bundling this package does not ship it (Next.js's standalone
    // output traced it into every build of `entity-registry/kysely`).
    const { default: BetterSqlite3 } = await import(/* webpackIgnore: true */ /* turbopackIgnore: true */ 'better-sqlite3')
    return new BetterSqlite3(file)
  }
  const { DatabaseSync } = await import('node:sqlite')
  const database = new DatabaseSync(file)
  return {
    exec: (sql) => database.exec(sql),
    close: () => database.close(),
    function: (name, options, implementation) => database.function(name, options, implementation as (value: unknown) => string | null),
    prepare(sql) {
      const statement = database.prepare(sql)
      // Kysely passes parameters as one array, as better-sqlite3 takes them; node:sqlite takes them spread.
      type Values = Parameters<typeof statement.all>
      return {
        reader: statement.columns().length > 0,
        all: (parameters) => statement.all(...(parameters as Values)),
        run: (parameters) => statement.run(...(parameters as Values)),
        iterate: (parameters) => statement.iterate(...(parameters as Values)) as IterableIterator<unknown>,
      }
    },
  }
}

/**
 * What `registerSqliteFunctions` needs of a better-sqlite3 database: its own type stays out of this
 * package's public types, so a consumer compiles without `@types/better-sqlite3`.
 */
export interface SqliteFunctionHost {
  function(name: string, options: { deterministic: boolean }, implementation: (value: unknown) => unknown): unknown
}

/** Adds the functions the store's SQL calls to a better-sqlite3 database opened elsewhere. */
export function registerSqliteFunctions(database: SqliteFunctionHost): void {
  // SQLite's own lower() folds ASCII only; `~` must fold as the in-memory evaluation does.
  database.function(SQLITE_FOLD_FUNCTION, { deterministic: true }, (value: unknown) =>
    value === null ? null : foldCase(String(value)),
  )
}

/** Prepared statements kept per SQL text; a query shape seldom used falls out first. */
const STATEMENT_CACHE_SIZE = 256

/**
 * Kysely prepares every query anew, and preparing costs more than running a point query: caching
 * the statements makes writes about three times faster (bench/README.md). A statement runs to
 * completion before the next query on this one connection, so sharing it is safe. Every statement
 * of the store comes from here (Kysely's and `readNow`'s): its failures are the store's
 * (`StoreStatement`).
 */
function withStatementCache(database: SqliteConnection): SqliteDatabase {
  const statements = new Map<string, SqliteStatement>()
  return {
    close: () => database.close(),
    prepare(sql: string) {
      const statement = statements.get(sql) ?? new StoreStatement(prepared(database, sql))
      setNewest(statements, sql, statement, STATEMENT_CACHE_SIZE)
      return statement
    },
  }
}

function prepared(database: SqliteConnection, sql: string): SqliteStatement {
  try {
    return database.prepare(sql)
  } catch (error) {
    throw asStoreError(error)
  }
}

/**
 * A prepared statement whose runs report the database held by another connection as the store
 * away (`asStoreError`), whichever path runs it. One object a prepared statement and a try a run,
 * no closure a call: wrapped so, a list page costs what it did unwrapped (test/perf/page-cost.test.ts).
 */
class StoreStatement implements SqliteStatement {
  readonly reader: boolean
  readonly #statement: SqliteStatement

  constructor(statement: SqliteStatement) {
    this.#statement = statement
    this.reader = statement.reader
  }

  all(parameters: ReadonlyArray<unknown>): unknown[] {
    try {
      return this.#statement.all(parameters)
    } catch (error) {
      throw asStoreError(error)
    }
  }

  run(parameters: ReadonlyArray<unknown>): ReturnType<SqliteStatement['run']> {
    try {
      return this.#statement.run(parameters)
    } catch (error) {
      throw asStoreError(error)
    }
  }

  *iterate(parameters: ReadonlyArray<unknown>): IterableIterator<unknown> {
    try {
      yield* this.#statement.iterate(parameters)
    } catch (error) {
      throw asStoreError(error)
    }
  }
}
