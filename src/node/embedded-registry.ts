import { createApiKeyAuthenticator } from '../auth/api-keys.js'
import { createKeyManager } from '../auth/key-manager.js'
import { exposedGarbageCollector } from './collect-after-crowds.js'
import { bundledDemoFile, openData, type OpenedData } from './data-dir.js'
import { openRateLimiter } from './rate-limit.js'
import { storeKindOf } from '../kysely/index.js'
import { createRegistry, type Registry } from '../registry.js'
import { createAdminHandler, type AdminHandler } from '../telemetry/admin-handler.js'
import type { Logger } from '../telemetry/logger.js'
import { createMetrics, type Metrics } from '../telemetry/metrics.js'
import { blobsCheck, createReadiness, replicaCheck, SEARCH_BUILT_WITHIN, searchCheck, storeCheck } from '../telemetry/readiness.js'
import { replicaLagOf } from '../kysely/replica-lag.js'
import { createTelemetry } from '../telemetry/telemetry.js'
import { timedStore } from '../telemetry/timed-store.js'
import { decodeChangeId } from '../contract/change-id.js'
import type { SearchSetup } from './search-setup.js'
import { SEARCH_IN_DATABASE } from './search-in-database.js'
import type { Search } from '../search/search-service.js'
import type { ImportOptions, ImportReport } from '../warehouse/import.js'
import { readLines, spoolStandardInput, STANDARD_INPUT } from './read-lines.js'
import { RECORD_LIMITS } from '../warehouse/record-limits.js'

/** How long after opening the search index is opened, unless a search asks for it first. */
const SEARCH_OPEN_DELAY_MS = 500
/** How far behind its primary a replica may be before `/ready` fails, by default. */
const MAX_REPLICA_LAG_SECONDS = 30
/** Where the key made for a store with none goes, as the keys from before organizations did. */
const FIRST_KEY_ORGANIZATION = 'default'

export interface EmbeddedRegistryOptions {
  /** The data directory: the SQLite file, rendition blobs and search index live there. */
  data: string
  /** A database in place of the SQLite file: `postgres://…`, `pglite:…` or a SQLite path. */
  database?: string
  /**
   * A streaming replica of the PostgreSQL `database` (`postgres://…`): every read goes there (pages,
   * gets, facets, the feed, search inside the database, key lookups); writes (a key's last use, the
   * search index's) and a key the replica does not know yet go to `database`.
   */
  readDatabase?: string
  /** With `readDatabase`: `/ready` fails while the replica is more than this many seconds behind (default 30). */
  maxReplicaLagSeconds?: number
  /**
   * The most connections to a PostgreSQL `database` (default 10): a request that finds them all
   * busy waits at most 2 s for one, then answers 503 with `Retry-After`.
   */
  poolSize?: number
  /** Rendition bytes in place of `<data>/blobs`: a directory, or `s3://bucket/prefix`. */
  blobs?: string
  /** Import the bundled demo data when the store is empty. */
  demo?: boolean
  /** Keys accepted besides those stored (hashed) in the store. */
  apiKeys?: string[]
  /**
   * The search index: a directory or LanceDB URI (default `<data>/search`), `postgres` (inside the
   * PostgreSQL or PGlite `database`, shared by every instance over it), or `none`.
   */
  search?: string
  /**
   * `words` (default), `transformers:DIR`, or `none` (full text and names alone, with `search:
   * 'postgres'` on a database without pgvector); another than the index was built with needs a reindex.
   */
  embedder?: string
  /** Search the renditions' texts too (HTML and plain text, extracted in a worker thread); default true. */
  indexTexts?: boolean
  /**
   * Keep the search index's terms, prefiltered fields and vectors in memory too
   * (`createResidentSearchIndex`), where a search costs a fifth to a ninth of the CPU of LanceDB's
   * on disk, and less still of the index inside PostgreSQL's; default true. It loads in the
   * background (search answers from the index itself meanwhile) and takes some 500 to 800 MB at
   * 1,000,000 entities. In front of the index inside PostgreSQL, shared by every instance, it takes
   * in what the indexing instance writes there within a quarter of a second.
   */
  searchInMemory?: boolean
  /**
   * Search a query whose words no entity's own fields hold by their WordNet relatives too
   * (`military` finds the Armed Services committees; `loadWordRelatives`); default true.
   */
  wordRelatives?: boolean
  /**
   * Rank the people of the US states and territories a query names higher, those of the role it
   * asks for first (`Buckeye State senators`, `TX senator`: `createSearch`'s `places`); default true.
   */
  places?: boolean
  /** Requests per minute per key (default 600); 0 turns limiting off. */
  rateLimit?: number
  /** Count the rate limit by key (default) or by organization (`createRegistry`'s `rateLimitScope`). */
  rateLimitScope?: 'key' | 'org'
  /** Requests with a missing or wrong key allowed per minute from one address (default 60; 0 no limit). */
  authFailureLimit?: number
  /** Keep the rate limit in this Redis, shared by every instance. */
  redis?: string
  /** While Redis is away: let requests through uncounted (`open`, default) or refuse them with 503 (`closed`). */
  redisFailure?: 'open' | 'closed'
  /** Where the API is mounted (`createRegistry`'s `baseUrl`). */
  baseUrl?: string
  /** Serve the explorer page at `/` and `/explore` (`createRegistry`'s `explorer`; default false). */
  explorer?: boolean
  /** Where to say what happened (demo imported, key created, search off); default console.log. */
  print?: (line: string) => void
  /**
   * Logs a line a request (`info`), trouble while serving (a dependency away, back: `warn`) and
   * unexpected errors with their stack (`error`): a pino logger (`createLogger`). Without one,
   * warnings and unexpected errors go to stderr.
   */
  logger?: Logger
  /** Keep Prometheus metrics (served by `admin`'s `/metrics`); default true. */
  metrics?: boolean
  /** Long-polls and event streams of the change feed waiting at once at most (`createRegistry`'s `maxWaiting`). */
  maxWaiting?: number
}

export interface EmbeddedRegistry {
  registry: Registry
  /** `/live`, `/ready` and `/metrics`, to serve where probes and scrapers reach (no key asked). */
  admin: AdminHandler
  /** Its metrics, when kept. */
  metrics: Metrics | undefined
  /**
   * Turns `/ready` to 503 for good, and answers or ends every long-poll and event stream of the
   * change feed: the first step of a graceful shutdown.
   */
  drain(): void
  /** Stops indexing and closes the store, the search index and the rate limiter. */
  close(): Promise<void>
}

/**
 * The registry on the embedded defaults, as `entity-registry serve` runs it: SQLite and rendition
 * files in a data directory, a LanceDB search index that follows the change feed, API keys, and a
 * rate limit. Serve `registry` with any adapter (Node, Bun, Deno, Next.js, Hattip). With no key given
 * or stored, one is created and printed once.
 */
export async function openEmbeddedRegistry(options: EmbeddedRegistryOptions): Promise<EmbeddedRegistry> {
  const print = options.print ?? ((line: string) => console.log(line))
  const searchInDatabase = options.search === SEARCH_IN_DATABASE
  if (searchInDatabase && storeKindOf(options.database ?? '') !== 'postgres' && storeKindOf(options.database ?? '') !== 'pglite') {
    throw new Error(`search "${SEARCH_IN_DATABASE}" keeps the index in the store's database: it needs a postgres:// or pglite: database`)
  }
  const data = await openData(
    {
      data: options.data,
      ...(options.database ? { database: options.database } : {}),
      ...(options.readDatabase ? { readDatabase: options.readDatabase } : {}),
      ...(options.poolSize === undefined ? {} : { poolSize: options.poolSize }),
      onFeedPolling: (reason) => print(`change feed: ${reason}`),
      ...(options.blobs ? { blobs: options.blobs } : {}),
    },
    { searchInDatabase },
  )
  const logger = options.logger
  const warn = logger ? (message: string) => logger.warn(message) : (message: string) => console.error(message)
  /** The search index's in memory, unless told not to (`searchInMemory`): said once it has loaded. */
  const inMemory = options.searchInMemory === false ? {} : { inMemory: searchLoaded }
  function searchLoaded({ entities, milliseconds }: { entities: number; milliseconds: number }) {
    print(`search: ${entities} entities loaded in memory in ${(milliseconds / 1000).toFixed(1)} s`)
    // What the load let go (its batches, and the vectors the partitions took over: 100 MB at
    // 1,000,000 entities) is collected now, not whenever V8 gets to it: the RSS after a load is then
    // what the index keeps (bench/README.md, session 56).
    exposedGarbageCollector()?.()
  }
  // Inside the database the index loads nothing native and has nothing to build: opened before
  // serving, so that a database without the extensions it needs stops the start, saying which.
  const openedInDatabase = searchInDatabase
    ? await import('./search-setup.js')
        .then(({ openSearch, searchOptionsOf }) => openSearch(data.store, SEARCH_IN_DATABASE, { ...searchOptionsOf(options, data.blobs, warn), ...inMemory }))
        .catch(async (error: unknown) => {
          await data.store.close()
          throw error
        })
    : undefined
  if (openedInDatabase && options.embedder === 'none') print('search ranks by full text and names alone (--embedder none): no vectors')
  const metrics = options.metrics === false ? undefined : createMetrics()
  // On the primary: a replica behind it may not hold the entities imported yet.
  if (options.demo && (await data.store.primary.feedHead()) === null) {
    const report = await importFile(bundledDemoFile(), data)
    metrics?.importLines.inc({ result: 'applied' }, report.applied)
    metrics?.importLines.inc({ result: 'unchanged' }, report.unchanged)
    metrics?.importLines.inc({ result: 'rejected' }, report.errors.length)
    print(`imported the demo data: ${report.applied} entities`)
  }
  const apiKeys = options.apiKeys ?? []
  if (apiKeys.length === 0 && (await data.store.countApiKeys()) === 0) {
    const { key } = await createKeyManager(data.store).createKey({ org: FIRST_KEY_ORGANIZATION, label: 'created by serve' })
    print(`created an API key (shown once, kept only hashed): ${key}`)
  }
  // Opened a moment after the server starts answering, or at the first search if sooner: loading
  // LanceDB blocks the process for 50 to 300 ms, which the first requests (on a serverless cold
  // start, the only one) should not wait for. The index then follows the feed in the background;
  // search answers from it as it stands, with the lag in a header.
  let opening: Promise<SearchSetup | undefined> | undefined
  const openSearchOnce = () =>
    (opening ??= (openedInDatabase
      ? Promise.resolve(openedInDatabase)
      : import('./search-setup.js').then(({ openSearch, searchLocation, searchOptionsOf }) =>
          openSearch(data.store, searchLocation({ data: options.data, ...(options.search ? { search: options.search } : {}) }), {
            ...searchOptionsOf(options, data.blobs, warn),
            ...inMemory,
          }),
        )
    )
      .then(async (search) => {
        await search.follow({ shared: searchInDatabase && storeKindOf(options.database ?? '') === 'postgres', print })
        return search
      })
      .catch((error: unknown) => {
        // DESIGN 8: where LanceDB's native library cannot load, everything but search still serves.
        print(`search is off: ${(error as Error).message}`)
        return undefined
      }))
  const searchOn = options.search !== 'none'
  const openTimer = searchOn ? setTimeout(openSearchOnce, SEARCH_OPEN_DELAY_MS) : undefined
  const search: PromiseLike<Search | undefined> = { then: (resolve, reject) => openSearchOnce().then((setup) => setup?.search).then(resolve, reject) }
  const rateLimit = options.rateLimit ?? 600
  const limiter = rateLimit > 0 ? await openRateLimiter(rateLimit, options.redis, { warn, ...(options.redisFailure ? { failure: options.redisFailure } : {}) }) : undefined
  const openServedLag = async () => (searchOn ? (await openSearchOnce())?.servedLag : undefined)
  const searchLag = async () => {
    // Only once open: a scrape or a probe must not be what opens the index.
    const served = opening && (await opening)?.servedLag
    return served ? { changes: await served.lag(), seconds: await served.lagSeconds() } : null
  }
  const replicaLag = options.readDatabase ? replicaLagOf(data.store) : undefined
  metrics?.observe({
    feedHead: async () => {
      const head = await data.store.feedHead()
      return head === null ? 0 : decodeChangeId(head)
    },
    searchLag,
    ...(replicaLag ? { replicaLag } : {}),
    ...(data.store.connectionPool ? { storePool: data.store.connectionPool } : {}),
  })
  const readiness = createReadiness(
    [
      storeCheck(data.store),
      blobsCheck(data.blobs),
      ...(searchOn ? [searchCheck(async () => (await openServedLag())?.buildLag(), SEARCH_BUILT_WITHIN)] : []),
      ...(replicaLag ? [replicaCheck(replicaLag, options.maxReplicaLagSeconds ?? MAX_REPLICA_LAG_SECONDS)] : []),
    ],
    { searchLag, ...(replicaLag ? { replicaLag } : {}) },
  )
  const auth = createApiKeyAuthenticator({ keys: apiKeys, store: data.store, onError: (error) => warn(`API keys: recording when keys were last used failed: ${(error as Error).message}`) })
  const registry = createRegistry({
    store: metrics ? timedStore(data.store, metrics) : data.store,
    ...(metrics || logger ? { telemetry: createTelemetry({ ...(metrics ? { metrics } : {}), ...(logger ? { logger } : {}) }) } : {}),
    ...(logger ? { onError: (error: unknown, _request: unknown, requestId: string) => logger.error({ err: error, requestId }, 'unexpected error, answered 500') } : {}),
    blobs: data.blobs,
    ...(searchOn ? { search } : {}),
    auth,
    ...(limiter ? { rateLimit: limiter.rateLimit } : {}),
    ...(options.rateLimitScope ? { rateLimitScope: options.rateLimitScope } : {}),
    ...(options.authFailureLimit === undefined ? {} : { authFailureLimit: options.authFailureLimit }),
    ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}),
    ...(options.explorer ? { explorer: true } : {}),
    ...(options.maxWaiting === undefined ? {} : { maxWaiting: options.maxWaiting }),
  })
  metrics?.observeWaiting(() => registry.waiting())
  return {
    registry,
    admin: createAdminHandler({ readiness, ...(metrics ? { metrics } : {}) }),
    metrics,
    drain() {
      readiness.drain()
      registry.stopWaiting()
    },
    async close() {
      clearTimeout(openTimer)
      await (await opening)?.close()
      await limiter?.close()
      await auth.flush()
      await data.store.close()
    },
  }
}

/** Lines per transaction, progress, and a full snapshot's limit, as `importNdjson` takes them. */
export type ImportFileOptions = Pick<ImportOptions, 'onLine' | 'batchSize' | 'full'> & {
  /** Called with the bytes of each chunk read from the file: a full snapshot reads it twice. */
  onRead?: (bytes: number) => void
}

/**
 * Applies an NDJSON file, or standard input for `-`, gzip-compressed or not, to a data directory's
 * store, with its renditions: their paths are relative to the file's directory (the working
 * directory for standard input). A full snapshot is read twice: from standard input, it is first
 * copied to a temporary file as it comes (compressed if it came so).
 */
export async function importFile(source: string, { store, blobs }: OpenedData, options: ImportFileOptions = {}): Promise<ImportReport> {
  // Loaded when there is something to import: record validation (zod) is no part of serving.
  const { baseDirOf, importNdjson } = await import('../warehouse/import.js')
  const spooled = options.full !== undefined && source === STANDARD_INPUT ? await spoolStandardInput() : undefined
  try {
    const file = spooled?.file ?? source
    const { onRead, ...importOptions } = options
    // A line over a record's limit is refused as it streams past, never held nor parsed.
    const read = () => readLines(file, { maxLineBytes: RECORD_LIMITS.recordBytes, ...(onRead ? { onRead } : {}) })
    return await importNdjson(options.full === undefined ? read() : read, {
      ...importOptions,
      warehouse: store.warehouse,
      blobs,
      baseDir: source === STANDARD_INPUT ? process.cwd() : baseDirOf(source),
    })
  } finally {
    await spooled?.remove()
  }
}
