import { stat } from 'node:fs/promises'
import { serve as serveNode } from '../../adapters/node.js'
import { importFile, openEmbeddedRegistry } from '../node/embedded-registry.js'
import type { Registry } from '../registry.js'
import { isDependencyUnavailable } from '../ports/dependency.js'
import type { ImportCommandOptions, ReindexCommandOptions, ServeOptions } from './invocation.js'
import type { Print } from './print.js'
import { UsageError } from './usage-error.js'
import { openData, type DataOptions } from '../node/data-dir.js'
import { SEARCH_IN_DATABASE } from '../node/search-in-database.js'
import { collectAfterCrowds } from '../node/collect-after-crowds.js'
import { keepHeapUnder } from '../node/heap-ceiling.js'
import { STANDARD_INPUT } from '../node/read-lines.js'
import { createProgress } from './progress.js'
import { decodeChangeId } from '../contract/change-id.js'
import { createLogger } from '../telemetry/logger.js'

/**
 * Serves until the returned function is called, which shuts down gracefully: `/ready` turns 503, the
 * listener stops accepting, requests in flight get `shutdownTimeoutMs` to finish, then the store,
 * the index and the rate limiter close.
 */
export async function serveCommand(options: ServeOptions, print: Print): Promise<() => Promise<void>> {
  const logger = await createLogger({ level: options.logLevel, format: options.logFormat })
  const embedded = await openEmbeddedRegistry({ ...options, print, logger, metrics: options.adminPort !== undefined })
  const server = await listen(embedded.registry, options)
  const admin = options.adminPort === undefined ? undefined : await serveNode(embedded.admin, { port: options.adminPort, host: options.adminHost })
  if (admin) print(`admin (/live, /ready, /metrics) on ${admin.url}`)
  print(`listening on ${server.url}`)
  return async () => {
    embedded.drain()
    logger.info({ graceMs: options.shutdownTimeoutMs }, 'shutting down: finishing the requests in flight')
    await server.close(options.shutdownTimeoutMs)
    await embedded.close()
    await admin?.close()
    logger.info('stopped')
    logger.flush()
  }
}

/**
 * Bun's and Deno's own servers under those runtimes (`bunx entity-registry serve`), node:http
 * elsewhere: each runtime's fastest way to serve.
 */
async function listen(registry: Registry, { port, host, trustProxy, sendTimeoutMs }: ServeOptions): Promise<{ url: string; close(graceMs?: number): Promise<void> }> {
  if ('Bun' in globalThis) return (await import('../../adapters/bun.js')).serve(registry, { port, hostname: host, trustProxy })
  if ('Deno' in globalThis) return (await import('../../adapters/deno.js')).serve(registry, { port, hostname: host, trustProxy })
  const running = await serveNode(registry, { port, host, trustProxy, sendTimeoutMs })
  const stopCollecting = collectAfterCrowds(running.server)
  return {
    url: running.url,
    close: (graceMs) => {
      stopCollecting()
      return running.close(graceMs)
    },
  }
}

/**
 * Rebuilds the search index from the store's feed, showing progress: changes applied, and how far
 * through the feed; renditions whose text is skipped go to `warn`.
 */
export async function reindexCommand({ progress: format, ...options }: ReindexCommandOptions, print: Print, warn: Print): Promise<void> {
  const { openSearch, searchLocation, searchOptionsOf } = await import('../node/search-setup.js')
  const data = await openData(options, { searchInDatabase: options.search === SEARCH_IN_DATABASE })
  const progress = createProgress('reindex', { unit: 'changes', ...(format ? { format } : {}) })
  let applied = 0
  const search = await openSearch(data.store, searchLocation(options), {
    ...searchOptionsOf(options, data.blobs, warn),
    rebuilding: true,
    onProgress: (step) => {
      progress.add(step.applied - applied)
      applied = step.applied
      // Feed positions are sequence numbers: the cursor's of the head's is the part indexed.
      const [at, head] = [step.cursor, step.head].map((id) => (id === null ? null : decodeChangeId(id)))
      if (typeof at === 'number' && typeof head === 'number') progress.reach(at, head)
    },
  }).catch(async (error: unknown) => {
    await data.store.close()
    throw error
  })
  try {
    const total = await search.indexer.rebuild()
    progress.done()
    print(`reindexed: ${total} changes applied`)
  } finally {
    await search.close()
    await data.store.close()
  }
}

/** The file `import` reads, refused as bad usage when missing or a directory. */
async function fileToImport(source: string) {
  const found = await stat(source).catch(() => null)
  if (found === null) throw new UsageError(`import: no such file: ${source}`)
  if (found.isDirectory()) throw new UsageError(`import: ${source} is a directory, not an NDJSON file`)
  return found
}

/** The JS heap in use past which an import collects its garbage (`keepHeapUnder`): a batch of 10,000 lines holds some 45 MB. */
const IMPORT_HEAP_CEILING = 128 * 1024 * 1024

/**
 * Applies an NDJSON file or standard input; rejected lines go to `warn`. The exit code: 0 all applied,
 * 1 some line rejected (or the import stopped), 2 a full snapshot refused (nothing changed).
 */
export async function importCommand({ source, batchSize, full, progress: format }: ImportCommandOptions, options: DataOptions, print: Print, warn: Print): Promise<number> {
  // Before the data directory or database is opened: a mistyped name must create nothing.
  const size = source === STANDARD_INPUT ? undefined : (await fileToImport(source)).size
  const data = await openData(options)
  const progress = createProgress('import', { unit: 'lines', ...(format ? { format } : {}) })
  // A full snapshot's file is read twice: the whole is both reads.
  const total = size === undefined ? undefined : full ? 2 * size : size
  let read = 0
  const stopWatchingHeap = keepHeapUnder(IMPORT_HEAP_CEILING)
  try {
    const report = await importFile(source, data, {
      onLine: () => progress.add(),
      ...(total === undefined ? {} : { onRead: (bytes: number) => progress.reach((read += bytes), total) }),
      ...(batchSize === undefined ? {} : { batchSize }),
      ...(full ? { full } : {}),
    })
    progress.done()
    for (const error of report.errors.sort((a, b) => a.line - b.line)) warn(`line ${error.line}: ${error.message}`)
    const deleted = report.deleted === undefined ? '' : `, deleted ${report.deleted} not in the snapshot`
    print(`applied ${report.applied}, unchanged ${report.unchanged}, rejected ${report.errors.length}${deleted}`)
    return report.errors.length === 0 ? 0 : 1
  } catch (error) {
    // Already loaded by importFile; not at the top: serving never loads the import's validation.
    const { ImportStoppedError, SnapshotRefusedError } = await import('../warehouse/import.js')
    if (error instanceof SnapshotRefusedError) {
      progress.done()
      warn(`import --full: ${error.message}; nothing changed`)
      return 2
    }
    if (!(error instanceof ImportStoppedError && isDependencyUnavailable(error.cause))) throw error
    progress.done()
    const cause = error.cause.cause instanceof Error ? ` (${error.cause.cause.message})` : ''
    warn(`import: the store became unavailable at line ${error.line}: ${error.cause.message}${cause}; the lines before it are applied, none from it on`)
    return 1
  } finally {
    stopWatchingHeap()
    await data.store.close()
  }
}
