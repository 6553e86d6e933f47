import type { ConnectionPoolUse } from './connection-pool-use.js'
import type { Compilable, Kysely } from 'kysely'
import { decodeChangeId, encodeChangeId } from '../contract/change-id.js'
import type { StoredEntity } from '../contract/entity.js'
import type { ChangePage, EntityPage, ListChangesQuery, ListEntitiesQuery } from '../ports/entity-store.js'
import { DependencyUnavailableError } from '../ports/dependency.js'
import type { RegistryStore } from '../ports/store.js'
import type { Warehouse } from '../ports/warehouse.js'
import { createWarehouse } from '../warehouse/operations.js'
import { planFilter, windowFor } from './filter-plan.js'
import { qualifiersToSql, seekToSql } from './gffs-to-sql.js'
import { createKyselyApiKeyStore } from './kysely-api-key-store.js'
import { countFacets } from './facet-counts.js'
import { createKyselyWarehouseBackend } from './kysely-warehouse-backend.js'
import { migrateToLatest } from './migrations.js'
import { feedHeadQuery, inSeekOrder, rowsAtMost, seekingCandidates, selectPage, selectPageWithHead, type OrderedBy } from './page-queries.js'
import { createQueryShapes, parameterizeQualifiers, type ImmediateRead, type ParameterValue } from './query-shapes.js'
import { batchedGets } from './batched-gets.js'
import { PAGE_COLUMNS, selectChanges, selectMergeEnd, selectServedEntitiesAmong, selectServedEntitiesAmongJson, selectServedEntity, selectMergeEndAfterFirstHop, asRenderedEntities, firstEntity, toStoredChange, toStoredEntity, type ServedEntityRow } from './rows.js'
import { PREVIOUS_CONTRACT_COLUMNS, type RegistryDatabase } from './schema.js'
import { isLockedOut } from './sqlite-errors.js'
import { resolveDialect, type DialectName, type SqlDialect } from './sql-dialect.js'
import type { ChangeNotifier } from '../ports/change-notifier.js'
import { combineNotifiers, createLocalNotifier, pollingNotifier } from '../live-feed/notifiers.js'

/** Settings every Kysely store takes. */
export interface StoreTuning {
  /**
   * Candidate rows one filtered list request checks at most (default 10,000; fewer for costly
   * filters). Bounds every request's cost: a sparse filter answers short pages that move past it.
   */
  listWindow?: number
  /**
   * Entities a facet count may read for a filter on fields other than the facet fields (default
   * 100,000): past it, the filter is refused as too broad. Filters on facet fields alone read none.
   */
  facetScanLimit?: number
}

export interface KyselyStoreOptions<DB = unknown> extends StoreTuning {
  /**
   * Your Kysely instance, whatever its database type: the store adds tables of its own beside yours.
   * A SQLite connection needs `registerSqliteFunctions` first (createSqliteStore does it).
   */
  db: Kysely<DB>
  /**
   * A streaming replica of `db`'s database (PostgreSQL), which the reads go to: pages, gets,
   * facets, the feed, key lookups. Writes go to `db`, and so do a key the replica does not know yet
   * and the keys' management. Its schema comes from `db`'s by replication: only `db` is migrated.
   * `close()` destroys it too.
   */
  readDb?: Kysely<DB>
  dialect: DialectName
}

/** Every store port over one SQL database; `close()` destroys `db` (the SQLite or PGlite database, the pg pool) and `readDb`. */
export interface KyselyStore extends RegistryStore {
  /** The database the store writes to. */
  db: Kysely<RegistryDatabase>
  /** The database the store reads from: a replica's (`KyselyStoreOptions.readDb`), else `db`. */
  readDb: Kysely<RegistryDatabase>
  /**
   * The same store reading from `db`: itself without a replica. For a reader that must see what
   * was just written, at once (the shared search index's indexer, which writes beside it).
   */
  primary: KyselyStore
  /** How its connection pool is used now (a PostgreSQL store's; the others have no pool). */
  connectionPool?: () => ConnectionPoolUse
}

/** How reads run outside Kysely where the connection allows (`ImmediateRead`): on `db`, and on `readDb` when there is one. */
export interface ImmediateReads {
  db: ImmediateRead | null
  readDb?: ImmediateRead | null
  /** Every read goes to a server (PostgreSQL's `pg`), none ends in the turn it began: reads of one turn are shared (`QueryShapesOptions`). */
  toServer?: boolean
}

/**
 * How the store hears of commits by other processes, for the change feed's waiting requests (its own
 * are heard of as they commit): a notifier made over the store (given its `db` and a read of the
 * feed's head on it), or null where no other process writes (PGlite, SQLite `:memory:`). Default:
 * the feed's head read every 250 ms while a request waits.
 */
export type CommitWatch = ((store: { db: Kysely<RegistryDatabase>; readHead: () => Promise<string | null> }) => ChangeNotifier) | null

/** How often the feed's head is read for a store that has no better way to hear of commits (and a replica's, of its replay). */
const HEAD_POLL_MS = 250

/**
 * The store over a Kysely instance made for it alone (and a replica's, `readDb`), which it
 * destroys if opening fails (the factories for SQLite, PostgreSQL and PGlite use this).
 */
export async function createOwningStore<DB>(
  db: Kysely<DB>,
  dialect: DialectName,
  tuning: StoreTuning & { readDb?: Kysely<DB> } = {},
  readNow: ImmediateReads = { db: null },
  commits?: CommitWatch,
): Promise<KyselyStore> {
  try {
    return await openKyselyStore({ ...tuning, db, dialect }, readNow, commits)
  } catch (error) {
    await db.destroy()
    await tuning.readDb?.destroy()
    throw error
  }
}

/** The store over a Kysely instance; brings its schema up to date first. */
export function createKyselyStore<DB>(options: KyselyStoreOptions<DB>): Promise<KyselyStore> {
  return openKyselyStore(options, { db: null })
}

async function openKyselyStore<DB>(options: KyselyStoreOptions<DB>, readNow: ImmediateReads, commits?: CommitWatch): Promise<KyselyStore> {
  const db = options.db as unknown as Kysely<RegistryDatabase>
  const dialect = await resolveDialect(db, options.dialect)
  await migrateToLatest(db, dialect)
  for (const statement of dialect.refreshStatistics.onOpen) {
    // The planner's statistics are a hint: a SQLite store that opens while other processes write
    // (whose upgrade of a read to a write SQLite refuses at once, whatever the busy timeout) opens
    // without refreshing them; its own writes refresh them later.
    await statement.execute(db).catch((error: unknown) => {
      if (!isLockedOut(error instanceof DependencyUnavailableError ? error.cause : error)) throw error
    })
  }
  const local = createLocalNotifier()
  const warehouse = createWarehouse(createKyselyWarehouseBackend(db, dialect, () => local.notify()))
  const primaryStore = storeOver(db, db, warehouse, dialect, options, readNow.db, readNow.toServer)
  const others = commits === null ? undefined : commits === undefined ? pollingNotifier(primaryStore.feedHead, HEAD_POLL_MS) : commits({ db, readHead: primaryStore.feedHead })
  const replica =
    options.readDb === undefined ? undefined : storeOver(db, options.readDb as unknown as Kysely<RegistryDatabase>, warehouse, dialect, options, readNow.readDb ?? null, readNow.toServer)
  // Reads from a replica see a commit only once it has replayed it: its head is read too.
  const notifiers = [local, ...(others ? [others] : []), ...(replica ? [pollingNotifier(replica.feedHead, HEAD_POLL_MS)] : [])]
  const changeNotifier = notifiers.length === 1 ? local : combineNotifiers(...notifiers)
  const primary: KyselyStore = Object.assign(primaryStore, {
    changeNotifier,
    async close() {
      await changeNotifier.close?.()
      await db.destroy()
    },
  })
  if (replica === undefined) return primary
  const readDb = replica.readDb
  const onReplica = createKyselyApiKeyStore(readDb)
  return {
    ...replica,
    changeNotifier,
    primary,
    close: async () => {
      await changeNotifier.close?.()
      await readDb.destroy()
      await db.destroy()
    },
    // A key is looked up on the replica; one it does not know yet (made a moment ago) on the primary
    // before it is refused. The keys' other reads stay on the primary: what manages keys (and
    // `listApiKeyHashes`, read to find keys made a moment ago) must see what was just written.
    findApiKey: async (hash) => (await onReplica.findApiKey(hash)) ?? primary.findApiKey(hash),
  }
}

/** The store writing to `db` (through `warehouse`, its write side) and reading from `reads` (a replica's database, or `db`). */
function storeOver(
  db: Kysely<RegistryDatabase>,
  reads: Kysely<RegistryDatabase>,
  warehouse: Warehouse,
  dialect: SqlDialect,
  options: StoreTuning,
  readNow: ImmediateRead | null,
  toServer = false,
): KyselyStore {
  const maxListWindow = options.listWindow ?? 10_000
  const shapes = createQueryShapes(reads, readNow, { shareReadsOfATurn: toServer })
  const selectEntityById = (bound: ParameterValue[]) => selectServedEntity(reads, bound[0] as string)
  const selectMergeEndOf = (bound: ParameterValue[]) => selectMergeEnd(reads, bound[0] as string)
  const selectMergeEndAfterHopOf = (bound: ParameterValue[]) => selectMergeEndAfterFirstHop(reads, bound[0] as string)
  // Not async: read at once, a point read makes one promise, not three (each costs a get
  // allocations the collector then spends time on; bench/README.md).
  const readEntity = (key: string, values: string[], build: (bound: ParameterValue[]) => Compilable<ServedEntityRow>): Promise<StoredEntity | null> => {
    try {
      const rows = shapes.read(key, values, build)
      return Array.isArray(rows) ? Promise.resolve(firstEntity(rows)) : rows.then(firstEntity)
    } catch (error) {
      return Promise.reject(error)
    }
  }
  const readOneEntity = (id: string) => readEntity('entity', [id], selectEntityById)
  // Several ids in one statement whose text does not depend on their number (compiled and prepared
  // once: built by Kysely with 100 ids, a search's read cost more than SQLite's work).
  const readEntitiesAmong = async (ids: readonly string[]) =>
    (dialect.name === 'sqlite'
      ? await shapes.execute('entities-among', [JSON.stringify(ids)], (bound) => selectServedEntitiesAmongJson(reads, bound[0] as string))
      : await shapes.execute('entities-among', [ids], (bound) => selectServedEntitiesAmong(reads, bound[0] as string))
    ).map(toStoredEntity)
  // SQLite reads at once; on PostgreSQL the gets of one turn of the event loop share a statement.
  const getEntity = dialect.name === 'sqlite' ? readOneEntity : batchedGets(readOneEntity, readEntitiesAmong)
  const readFeedHead = async () => encodeHead((await shapes.execute('feed-head', [], () => feedHeadQuery(reads)))[0]!.seq)

  const store: KyselyStore = {
    db,
    readDb: reads,
    get primary() {
      return store
    },
    warehouse,
    close: () => db.destroy(),

    pagesCarryFeedHead: true,

    async listEntities({ qualifiers, after, limit, joined = false }: ListEntitiesQuery): Promise<EntityPage> {
      const plan = planFilter(qualifiers, maxListWindow)
      const seek = parameterizeQualifiers(plan.seek)
      const residual = parameterizeQualifiers(plan.residual)
      // Every query below takes the qualifiers' values first, then the cursor if it has one, then its own.
      const filterValues: ParameterValue[] = [...seek.values, ...residual.values]
      const filterShape = `${seek.key}${residual.key}`
      const filterOf = (bound: ParameterValue[], withCursor: boolean) => {
        const cursor = withCursor ? (bound[filterValues.length] as string) : null
        const seekSql = seekToSql(seek.withValues(bound), cursor, dialect)
        const residualQualifiers = residual.withValues(bound.slice(seek.values.length))
        return {
          seekSql,
          candidates: seekingCandidates(seekSql),
          inOrder: <Query extends OrderedBy>(query: Query) => inSeekOrder(seekSql, query),
          residualQualifiers,
          extra: bound.slice(filterValues.length + (withCursor ? 1 : 0)),
        }
      }
      const hasCursor = after !== null
      const values = [...filterValues, ...(hasCursor ? [after] : [])]
      const shape = `${filterShape}${hasCursor ? '>' : ''}`

      if (plan.residual.length === 0) {
        // The index answers exactly: a page reads only the rows it returns.
        const pageOf = (withCursor: boolean, size: number) => (bound: ParameterValue[]) => selectPage(reads, filterOf(bound, withCursor).seekSql, size)
        const joinedResources = joined ? dialect.joinedResources : null
        if (joinedResources !== null) {
          // One row: the resources joined in the database (a JS string and row object per entity
          // cost more than SQLite's reading them) with the feed head of the same snapshot.
          const [row] = await shapes.execute(`joined-page${shape}:${limit}`, values, (bound) =>
            reads
              .selectFrom(pageOf(hasCursor, limit)(bound).as('page'))
              .select((eb) => [
                joinedResources.as('resources'),
                eb.fn.countAll<number | string>().as('count'),
                eb.fn.max('id').as('last'),
                feedHeadQuery(reads).as('head'),
              ]),
          )
          // Whether a full page is the last: one index probe past it.
          const hasMore =
            Number(row!.count) === limit &&
            (await shapes.execute(`page${filterShape}>:1`, [...filterValues, row!.last!], pageOf(true, 1))).length > 0
          return { entities: [], joinedResources: row!.resources ?? '', hasMore, cursor: row!.last, feedHead: encodeHead(row!.head) }
        }
        const rows = await shapes.execute(`page-with-head${shape}:${limit}`, values, (bound) => selectPageWithHead(reads, filterOf(bound, hasCursor).seekSql, limit))
        // The head's row comes first from a plan that appends in order, as plans without parallel
        // workers do; with them it may come anywhere. The page's rows stay in their order either way:
        // a LIMIT's subquery runs in one process, whose rows a Gather passes on in order.
        // Rows a read gives are shared with requests that asked the same at once (createQueryShapes): read, never changed.
        const headAt = rows.findIndex((row) => row.id === null)
        const pageRows = [...rows.slice(0, headAt), ...rows.slice(headAt + 1)]
        const entities = asRenderedEntities(pageRows.slice(0, limit))
        return { entities, hasMore: pageRows.length > limit, cursor: entities.at(-1)?.id ?? null, feedHead: encodeHead(rows[headAt]!.head) }
      }
      const [window] = await shapes.execute(`window${shape}:${plan.window}`, values, (bound) => {
        const { candidates, inOrder } = filterOf(bound, hasCursor)
        return reads
          .selectFrom((eb) => inOrder(eb.selectFrom('entities').select('id').where(candidates)).limit(rowsAtMost(plan.window)).as('window'))
          .select((eb) => [eb.fn.countAll<number | string>().as('scanned'), eb.fn.max('id').as('last'), feedHeadQuery(reads).as('head')])
      })
      const feedHead = encodeHead(window!.head)
      if (window!.last === null) return { entities: [], hasMore: false, cursor: after, feedHead }
      const rows = await shapes.execute(`window-page${shape}:${limit}`, [...values, window!.last], (bound) => {
        const { candidates, inOrder, residualQualifiers, extra } = filterOf(bound, hasCursor)
        return inOrder(
          reads
            .selectFrom('entities')
            .select(PAGE_COLUMNS)
            .where((eb) => eb.and([candidates(eb), eb('id', '<=', dialect.hiddenValue(extra[0] as string)), qualifiersToSql(residualQualifiers, dialect)])),
        ).limit(rowsAtMost(limit + 1))
      })
      const entities = asRenderedEntities(rows.slice(0, limit))
      if (rows.length > limit) return { entities, hasMore: true, cursor: entities.at(-1)!.id, feedHead }
      // The whole window was checked: the next page starts after it, whether or not it matched.
      const windowFull = Number(window!.scanned) === plan.window
      return { entities, hasMore: windowFull, cursor: windowFull ? window!.last : (entities.at(-1)?.id ?? null), feedHead }
    },

    getEntity,

    // A get in one statement on SQLite, a merged id's too (a hop cost a statement and a promise).
    // On PostgreSQL the recursive statement costs the server more than the point read (in pgbench,
    // even prepared: 0.030 ms against 0.024), which most gets are: the point read first, and only for
    // a merged entity its chain in one more, so two round trips for any chain (two hops took three).
    getMergeEnd:
      dialect.name === 'sqlite'
        ? (id: string) => readEntity('merge-end', [id], selectMergeEndOf)
        : (id: string) =>
            getEntity(id).then((entity) => {
              if (entity?.state !== 'merged') return entity
              return entity.mergedInto === null ? null : readEntity('merge-end-after-hop', [entity.mergedInto], selectMergeEndAfterHopOf)
            }),

    async getEntities(ids) {
      if (ids.length === 0) return []
      return readEntitiesAmong(ids)
    },

    async listChanges({ qualifiers, after, limit, window: maxWindow, scope = 'after' }: ListChangesQuery): Promise<ChangePage> {
      // Every qualifier is checked row by row here: the window shrinks as the filter costs more.
      const window = windowFor(qualifiers, maxWindow, { passes: scope === 'either' ? 2 : 1 })
      const start = after === null ? 0 : decodeChangeId(after) ?? 0
      const { windowEnd, head } = await scanWindow(reads, start, window)
      const rows =
        windowEnd === null
          ? []
          : await selectChanges(reads)
              .where((eb) =>
                eb.and([
                  eb('seq', '>', start),
                  eb('seq', '<=', windowEnd),
                  scope === 'either'
                    ? eb.or([qualifiersToSql(qualifiers, dialect), qualifiersToSql(qualifiers, dialect, PREVIOUS_CONTRACT_COLUMNS)])
                    : qualifiersToSql(qualifiers, dialect),
                ]),
              )
              .orderBy('seq')
              .limit(limit)
              .execute()
      // A full page ends the scan at its last match; otherwise the whole window was scanned.
      const lastScanned = rows.length === limit ? Number(rows.at(-1)?.seq ?? start) : windowEnd ?? start
      return {
        changes: rows.map(toStoredChange),
        cursor: lastScanned > 0 ? encodeChangeId(lastScanned) : after,
        hasMore: head !== null && head > lastScanned,
      }
    },

    feedHead: readFeedHead,

    countFacets: (query) => countFacets(reads, dialect, query, options.facetScanLimit ?? 100_000),

    isChangeId: (id) => decodeChangeId(id) !== null,

    ...createKyselyApiKeyStore(db),
  }
  return store
}

/** A seq as a change id; `pg` returns a bigint as a string. */
const encodeHead = (seq: string | number | bigint | null | undefined) => (seq == null ? null : encodeChangeId(Number(seq)))

/** The seq of the last of the next `window` records after `start`, and of the newest record. */
async function scanWindow(
  db: Kysely<RegistryDatabase>,
  start: number,
  window: number,
): Promise<{ windowEnd: number | null; head: number | null }> {
  const row = await db
    .selectNoFrom((eb) => [
      eb
        .selectFrom(
          eb.selectFrom('changes').select('seq').where('seq', '>', start).orderBy('seq').limit(window).as('scanned'),
        )
        .select((scanned) => scanned.fn.max('seq').as('seq'))
        .as('windowEnd'),
      feedHeadQuery(db).as('head'),
    ])
    .executeTakeFirstOrThrow()
  // `pg` returns a bigint as a string.
  const seq = (value: string | number | bigint | null) => (value === null ? null : Number(value))
  return { windowEnd: seq(row.windowEnd), head: seq(row.head) }
}
