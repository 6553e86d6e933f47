import { Kysely, PGliteDialect, PostgresDialect, sql, type PostgresPool, type PostgresPoolClient } from 'kysely'
import { DependencyUnavailableError } from '../ports/dependency.js'
import { overriding } from './overriding.js'
import { createOwningStore, type KyselyStore, type StoreTuning } from './kysely-store.js'
import type { ImmediateRead } from './query-shapes.js'
import { asStoreError, poolBusyError } from './store-errors.js'
import type { ConnectionPoolUse } from './connection-pool-use.js'
import { DIRECT_SESSION_QUERY, isDirectSession } from './direct-session.js'
import { resolveDialect } from './sql-dialect.js'
import { sessionPlannedReads } from './session-planned-reads.js'
import { FEED_CHANNEL, postgresNotifier, type FeedNotifications, type ListenClient } from './postgres-notifications.js'

export interface PostgresConnectionOptions {
  /**
   * A statement outside a transaction (every read a request makes) not answered within this many
   * ms fails as the store being unavailable (a 503), and its connection is dropped (default 3000).
   * Statements in a transaction are not cut: an import's may wait for the writers' lock.
   */
  readTimeoutMs?: number
  /**
   * Called with each error of a connection the pool holds idle (the server ended it: a restart,
   * `pg_terminate_backend`); the pool drops that connection and makes a new one when needed.
   */
  onConnectionError?: (error: Error) => void
  /**
   * How waiting change-feed requests hear of commits by other processes and instances (default
   * `auto`): `listen` (`LISTEN` on one connection an instance), `poll` (the feed's head read every
   * 250 ms: through a transaction pooler such as PgBouncer), or `auto` (`listen`, unless a
   * notification sent after `LISTEN` does not come back, as through a transaction pooler).
   */
  feedNotifications?: FeedNotifications
  /** Told when `auto` falls back to reading the feed's head. */
  onFeedPolling?: (reason: string) => void
}

/**
 * `pool`: a `pg.Pool` (typed by Kysely's structural `PostgresPool`, so that no `@types/pg` is needed).
 * `poolSize`: the most connections the store's pool holds to the database (default 10, `pg`'s), each
 * instance's budget; a statement that finds them all busy waits for one at most 2 s, then the
 * request answers 503 with `Retry-After`.
 */
export type PostgresConnection = { connectionString: string; poolSize?: number } | { pool: PostgresPool }

export type PostgresStoreOptions = PostgresConnection &
  PostgresConnectionOptions &
  StoreTuning & {
    /**
     * A streaming replica of the database (a hot standby), which every read goes to: pages, gets,
     * facets, the feed, key lookups (`KyselyStoreOptions.readDb`). Writes, and a key the replica
     * does not know yet, go to the store's connection, the primary. Its pool has the primary's
     * `poolSize` unless given its own.
     */
    readFrom?: PostgresConnection
  }

/**
 * How long a request waits for a connection of the pool the store makes; with the read timeout,
 * a request's query has its answer or a 503 within 5 s.
 */
const CONNECTION_TIMEOUT_MS = 2000
const READ_TIMEOUT_MS = 3000

/**
 * The scale-out store: PostgreSQL through `pg`. Closing the store ends the pool, a given one too.
 * A server away (down, restarting, refusing connections) makes requests answer 503
 * `store_unavailable` until it is back; then the pool makes new connections by itself.
 */
export async function createPostgresStore(options: PostgresStoreOptions): Promise<KyselyStore> {
  // Loaded on demand, as the SQLite and PGlite drivers are.
  const { default: pg } = await import('pg').catch((cause: unknown) => {
    throw new Error('createPostgresStore needs the package pg: npm install pg', { cause })
  })
  // Each planned read's text and its function's call, once the store is open (the migrations made the functions).
  const plannedCalls = new Map<string, string>()
  const connect = (connection: PostgresConnection) => {
    const pool =
      'pool' in connection
        ? connection.pool
        : new pg.Pool({
            connectionString: connection.connectionString,
            connectionTimeoutMillis: CONNECTION_TIMEOUT_MS,
            types: textKeptAsIs(pg.types, [INT8]),
            ...(connection.poolSize === undefined ? {} : { max: connection.poolSize }),
          })
    // Without a listener, an idle connection's error (the server ended it) ends the process.
    const onConnectionError = options.onConnectionError ?? (() => {})
    const events = pool as unknown as PoolEvents
    events.on('error', (error) => onConnectionError(error))
    // A client lent out has no listener of the pool's: its connection lost between queries (or
    // ended on a read timeout) would emit an 'error' that ends the process; its next query fails and
    // reports it. Added as the client is made, not as it is lent: the server's message ending a new
    // connection can arrive in the same read as the one that completes it, before a lender's code runs.
    events.on('connect', (client) => client.on('error', () => {}))
    const { pool: kyselyPool, read, use } = storePool(pool, pg.Query as unknown as QueryConstructor, options.readTimeoutMs ?? READ_TIMEOUT_MS, plannedCalls)
    return { db: new Kysely<unknown>({ dialect: new PostgresDialect({ pool: kyselyPool }) }), read, use }
  }
  const primary = connect(options)
  const { readFrom } = options
  const primaryPoolSize = 'poolSize' in options ? options.poolSize : undefined
  const replica =
    readFrom && connect('connectionString' in readFrom && readFrom.poolSize === undefined && primaryPoolSize !== undefined ? { ...readFrom, poolSize: primaryPoolSize } : readFrom)
  // The listening connection is the notifier's own (on the primary, where the writers notify): a given
  // pool lends one for as long as it listens.
  const listen = async (): Promise<ListenClient> => {
    if ('pool' in options) {
      const client = (await options.pool.connect()) as PostgresPoolClient & ListenEvents
      client.on('error', () => {})
      return Object.assign(client, { close: async () => (client as unknown as { release(destroy: boolean): void }).release(true) })
    }
    const client = new pg.Client({ connectionString: options.connectionString, connectionTimeoutMillis: CONNECTION_TIMEOUT_MS })
    client.on('error', () => {})
    await client.connect()
    return Object.assign(client as unknown as ListenEvents, { close: () => client.end() })
  }
  const store = await createOwningStore(
    primary.db,
    'postgres',
    { ...options, ...(replica ? { readDb: replica.db } : {}) },
    { db: primary.read, ...(replica ? { readDb: replica.read } : {}), toServer: true },
    ({ db, readHead }) =>
      postgresNotifier({
        mode: options.feedNotifications ?? 'auto',
        connect: listen,
        notify: async (payload) => void (await sql`select pg_notify(${FEED_CHANNEL}, ${payload})`.execute(db)),
        readHead,
        ...(options.onFeedPolling ? { onPolling: options.onFeedPolling } : {}),
      }),
  )
  // Compiled by the store's Kysely in its dialect, as its reads are: the texts are theirs.
  const dialect = await resolveDialect(store.db, 'postgres').catch(async (error: unknown) => {
    await store.close()
    throw error
  })
  for (const planned of sessionPlannedReads(store.db, dialect)) plannedCalls.set(planned.text, planned.call)
  // The pool the requests wait on: the replica's when there is one.
  return Object.assign(store, { connectionPool: (replica ?? primary).use })
}

/** The events of a `pg` client the listener hears. */
type ListenEvents = Omit<ListenClient, 'close'>

/** PostgreSQL's `bigint` (the change feed's sequence numbers). */
const INT8 = 20

type TypeParser = (value: string) => unknown
interface TypeParsers {
  getTypeParser(oid: number, format?: string): TypeParser
}

/**
 * `pg`'s type parsers, but for the given types' text, which rows keep as it came: `pg` hands a
 * `bigint` over as its text, after a regular expression a value. A change feed page's rows each
 * carry their sequence number (a `bigint`); when list pages carried the feed head in each row,
 * that test cost 10 us of a page's 380.
 */
function textKeptAsIs(parsers: TypeParsers, oids: readonly number[]): TypeParsers {
  const keep: TypeParser = (value) => value
  return { getTypeParser: (oid, format) => ((format ?? 'text') === 'text' && oids.includes(oid) ? keep : parsers.getTypeParser(oid, format)) }
}

/** `pg.Query`, as this file makes one. */
type QueryConstructor = new (text: string, values: unknown, callback: (error: Error | undefined, result: { rows: unknown[] }) => void) => { name?: string }

/** What `pg`'s pool counts of its connections (`options.max`: its size, 10 unless given). */
interface PoolCounts {
  totalCount?: number
  idleCount?: number
  waitingCount?: number
  options?: { max?: number }
}
const PG_DEFAULT_POOL_SIZE = 10

/** What this file needs of a `pg` pool beyond Kysely's structural type. */
interface PoolEvents {
  on(event: 'error', listener: (error: Error) => void): unknown
  on(event: 'connect', listener: (client: { on(event: 'error', listener: (error: Error) => void): unknown }) => void): unknown
}

/** Distinct read statements a process names; the query shapes the store keeps are as many. */
const MAX_NAMED_READS = 256

const BEGIN = /^\s*(begin|start transaction)\b/i
const END = /^\s*(commit|rollback|end|abort)\s*$/i
/** Schema changes and statistics, which a store runs as it opens: they wait on other sessions' locks
 * and sample tables, and may take longer than a request's read without the database being away. */
const MAINTENANCE = /^\s*(create|alter|drop|analyze|vacuum|do|comment)\b/i

/**
 * The pool, as the store uses it: its clients name reads, bound their wait, and report a lost
 * connection as the store being unavailable; and `read`, which sends a query shape's read on a
 * connection of that pool without Kysely.
 *
 * On a connection whose session is its own (`isDirectSession`, checked once a connection), each
 * read (every query shape's, and any `select`) goes as a named statement: PostgreSQL parses and
 * plans an unnamed statement on every call, and a named one once a session (which doubles the rate
 * of a page query, measured with pgbench; through `serve`, unnamed, a get cost the server 40 to 60
 * us of CPU more and a list page 130 to 150, bench/README.md). Kysely sends every query unnamed; with the query
 * shapes compiled once, the texts repeat, and the first MAX_NAMED_READS of them are named. Through a
 * transaction pooler (PgBouncer before 1.21, RDS Proxy, Supavisor) every statement goes unnamed:
 * a name prepared in a session the pooler then lends to another client fails there ("already
 * exists", "does not exist"), or runs another process's statement of the same name; there the hot
 * point reads (`plannedCalls`) go as calls of PL/pgSQL functions, whose plans the server session
 * keeps (session-planned-reads.ts). Detected rather than configured, so that `--database` pointed
 * at a pooler works as it is.
 *
 * Each query goes with a callback, and the promise is made here: awaiting `pg`'s own promise, ten
 * concurrent page queries kept so much alive that V8 moved it to the old generation, 20 full
 * collections in 4 s against one with the callback (19,000 page queries against 27,600; measured
 * with pg 8.23 and Kysely's driver, bench/README.md).
 *
 * A statement outside a transaction not answered within `readTimeoutMs` fails, and its client is
 * ended (its socket destroyed): the pool then drops it rather than lend a connection that hangs.
 * Maintenance statements are not timed (an open under load failed when its migration's table check
 * took over 3 s).
 */
function storePool(
  pool: PostgresPool,
  Query: QueryConstructor,
  readTimeoutMs: number,
  plannedCalls: ReadonlyMap<string, string>,
): { pool: PostgresPool; read: ImmediateRead; use: () => ConnectionPoolUse } {
  const counts = pool as unknown as PoolCounts
  const size = counts.options?.max ?? PG_DEFAULT_POOL_SIZE
  let waits = 0
  let timeouts = 0
  const use = (): ConnectionPoolUse => {
    const idle = counts.idleCount ?? 0
    return { size, busy: (counts.totalCount ?? 0) - idle, idle, waiting: counts.waitingCount ?? 0, waits, timeouts }
  }
  const names = new Map<string, string>()
  // `read` sends only the query shapes' reads, a recursive one (`with recursive`) among them; through
  // Kysely, a statement is known to be a read by its first word.
  const nameOf = (text: string, isRead: boolean): string | undefined => {
    let name = names.get(text)
    if (name === undefined && names.size < MAX_NAMED_READS && isRead) {
      name = `entity_registry_${names.size}`
      names.set(text, name)
    }
    return name
  }
  type Done<Result> = (error: unknown, result?: Result) => void
  /** Whether each connection's session is its own (`isDirectSession`): only those name reads. */
  const direct = new WeakMap<PostgresPoolClient, boolean>()
  /** Sends a statement; `done` is called once, with the first of its answer and the timeout. */
  const send = (client: PostgresPoolClient, text: string, values: unknown, timed: boolean, isRead: boolean, done: Done<{ rows: unknown[] }>) => {
    const name = direct.get(client) === true ? nameOf(text, isRead) : undefined
    let answered = false
    const answer: Done<{ rows: unknown[] }> = (error, result) => {
      if (answered) return
      answered = true
      clearTimeout(timer)
      done(error, result)
    }
    const timer = timed
      ? setTimeout(() => {
          // Ended before `done` may release it, so that the pool drops it rather than lend it again.
          void (client as unknown as { end(): Promise<void> }).end().catch(() => {})
          answer(new DependencyUnavailableError('store', `the database did not answer within ${readTimeoutMs} ms`))
        }, readTimeoutMs)
      : undefined
    // Made from the text, then named: from a config object, `pg` copies it by its property
    // descriptors first, 4 to 6 us a query (bench/README.md).
    const query = new Query(text, values, (error, result) => answer(error ? asStoreError(error) : null, result))
    if (name !== undefined) query.name = name
    ;(client.query as (query: unknown) => unknown).call(client, query)
  }
  // `pg`'s pool takes a callback (and then makes no promise); a pool of Kysely's type answers a promise.
  // Its errors come as the store answers them (`poolBusyError`, `asStoreError`, or `send`'s).
  const connectWith = (done: Done<PostgresPoolClient>) => {
    // A connection lent for the first time is asked once whether its session is its own.
    const lent: Done<PostgresPoolClient> = (error, client) => {
      if (error || direct.has(client!)) return done(error, client)
      send(client!, DIRECT_SESSION_QUERY, [], true, false, (error, result) => {
        if (error) {
          client!.release()
          return done(error)
        }
        direct.set(client!, isDirectSession(client, result!.rows[0]))
        done(null, client)
      })
    }
    // Every connection busy: this statement waits for one, at most the pool's connection timeout.
    const waited = (counts.idleCount ?? 0) === 0 && (counts.totalCount ?? 0) >= size
    if (waited) waits++
    const given: Done<PostgresPoolClient> = (error, client) => {
      if (!error) return lent(null, client)
      const busy = waited ? poolBusyError(error, size) : null
      if (busy !== null) timeouts++
      lent(busy ?? asStoreError(error))
    }
    const connecting = (pool.connect as (callback: Done<PostgresPoolClient>) => Promise<PostgresPoolClient> | undefined).call(pool, given)
    connecting?.then((client) => given(null, client), given)
  }
  const connect = () =>
    new Promise<PostgresPoolClient>((resolve, reject) => connectWith((error, client) => (error ? reject(error) : resolve(client!))))
  const inTransaction = new WeakSet<PostgresPoolClient>()
  const storeClient = (client: PostgresPoolClient) =>
    overriding(client, 'query', (...query: unknown[]) => {
      const [text, values] = query
      // A cursor (Kysely's streaming) goes as it came.
      if (typeof text !== 'string') return (client.query as (...query: unknown[]) => unknown).apply(client, query)
      if (BEGIN.test(text)) inTransaction.add(client)
      const timed = !inTransaction.has(client) && !MAINTENANCE.test(text)
      if (END.test(text)) inTransaction.delete(client)
      return new Promise((resolve, reject) => send(client, text, values, timed, /^select /i.test(text), (error, result) => (error ? reject(error) : resolve(result))))
    })
  // Through Kysely a read went through a dozen async calls and a connection object made a call (its
  // driver's, its connection provider's, this pool's wrapped client): in-process a get by id's read
  // took 67 us of Node CPU, here 44, as the floor's `pool.query` (bench/README.md). Callbacks to the
  // one promise a read makes: each promise more costs a request its allocations.
  const read: ImmediateRead = (text, values) =>
    new Promise((resolve, reject) =>
      connectWith((error, client) => {
        if (error) return reject(error)
        const answer: Done<{ rows: unknown[] }> = (error, result) => {
          client!.release()
          if (error) reject(error)
          else resolve(result!.rows)
        }
        const call = direct.get(client!) === true ? undefined : plannedCalls.get(text)
        if (call === undefined) return send(client!, text, values, true, true, answer)
        // A replica that has not replayed the function's creation yet runs the statement itself.
        send(client!, call, values, true, true, (error, result) =>
          isUndefinedFunction(error) ? send(client!, text, values, true, true, answer) : answer(error, result),
        )
      }),
    )
  return { pool: overriding(pool, 'connect', async () => storeClient(await connect())), read, use }
}

/** PostgreSQL's `undefined_function`. */
const isUndefinedFunction = (error: unknown) => (error as { code?: unknown } | undefined)?.code === '42883'

export interface PgliteStoreOptions extends StoreTuning {
  /** A directory to keep the database in; in memory when absent. */
  dataDir?: string
  /** PGlite's extensions to load (its `extensions` option): `pg_trgm` and `vector` for the search index inside it. */
  extensions?: Record<string, unknown>
}

/** PostgreSQL in process (PGlite, WebAssembly): tests, demos, and PostgreSQL semantics without a server. */
export async function createPgliteStore({ dataDir, extensions, ...tuning }: PgliteStoreOptions = {}): Promise<KyselyStore> {
  // Past bundlers: an application bundling `entity-registry/kysely` for PostgreSQL does not ship PGlite.
  const { PGlite } = await import(/* webpackIgnore: true */ /* turbopackIgnore: true */ '@electric-sql/pglite').catch((cause: unknown) => {
    throw new Error('createPgliteStore needs the package @electric-sql/pglite: npm install @electric-sql/pglite', {
      cause,
    })
  })
  // In process: no other process writes to it, and its own commits are heard as they are made.
  return createOwningStore(new Kysely({ dialect: new PGliteDialect({ pglite: new PGlite(dataDir, extensions ? { extensions: extensions as never } : {}) }) }), 'postgres', tuning, { db: null }, null)
}
