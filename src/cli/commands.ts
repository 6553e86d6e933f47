import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import { serve as serveNode } from '../../adapters/node.js'
import { createApiKeyAuthenticator, generateApiKey, hashApiKey } from '../auth/api-keys.js'
import { createRegistry, type Registry } from '../registry.js'
import { baseDirOf, importNdjson, type ImportReport } from '../warehouse/import.js'
import { UsageError } from './arguments.js'
import { openRateLimiter } from './rate-limit.js'
import { bundledDemoFile, openData, type DataOptions, type OpenedData } from './data-dir.js'
import { counted, createProgress, type Progress } from './progress.js'
import { openSearch, searchLocation } from './search-setup.js'

export interface ServeOptions extends DataOptions {
  port: number
  host: string
  apiKeys: string[]
  /** Requests per minute per key; 0 turns limiting off. */
  rateLimit: number
  /** Keep the rate limit in this Redis, shared by every instance. */
  redis?: string
  demo: boolean
  baseUrl?: string
  trustProxy: boolean
  /** The search index: a directory or LanceDB URI (default `<data>/search`), or `none`. */
  search?: string
}

export type Print = (line: string) => void

export async function serveCommand(options: ServeOptions, print: Print): Promise<() => Promise<void>> {
  const data = await openData(options)
  if (options.demo && (await data.store.feedHead()) === null) {
    const report = await importFile(bundledDemoFile(), data)
    print(`imported the demo data: ${report.applied} entities`)
  }
  if (options.apiKeys.length === 0 && (await data.store.countKeys()) === 0) {
    const key = generateApiKey()
    await data.store.addKeyHash(await hashApiKey(key))
    print(`created an API key (shown once, kept only hashed): ${key}`)
  }
  // The index follows the feed in the background; until it has caught up, search answers 503.
  const search = options.search === 'none' ? undefined : await openSearch(data.store, searchLocation(options)).catch((error: unknown) => {
    // DESIGN 8: where LanceDB's native library cannot load, everything but search still serves.
    print(`search is off: ${(error as Error).message}`)
    return undefined
  })
  search?.indexer.start()
  const limiter = options.rateLimit > 0 ? await openRateLimiter(options.rateLimit, options.redis) : undefined
  const registry = createRegistry({
    store: data.store,
    blobs: data.blobs,
    ...(search ? { search: search.search } : {}),
    auth: createApiKeyAuthenticator({ keys: options.apiKeys, store: data.store }),
    ...(limiter ? { rateLimit: limiter.rateLimit } : {}),
    ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}),
  })
  const server = await listen(registry, options)
  print(`listening on ${server.url}`)
  return async () => {
    await server.close()
    await search?.close()
    await limiter?.close()
    await data.store.close()
  }
}

/**
 * Bun's and Deno's own servers under those runtimes (`bunx entity-registry serve`), node:http
 * elsewhere: each runtime's fastest way to serve.
 */
async function listen(registry: Registry, { port, host, trustProxy }: ServeOptions): Promise<{ url: string; close(): Promise<void> }> {
  if ('Bun' in globalThis) return (await import('../../adapters/bun.js')).serve(registry, { port, hostname: host, trustProxy })
  if ('Deno' in globalThis) return (await import('../../adapters/deno.js')).serve(registry, { port, hostname: host, trustProxy })
  return serveNode(registry, { port, host, trustProxy })
}

/** Rebuilds the search index from the store's feed, printing progress and rate. */
export async function reindexCommand(options: DataOptions & { search?: string }, print: Print): Promise<void> {
  const data = await openData(options)
  const search = await openSearch(data.store, searchLocation(options), print)
  try {
    const applied = await search.indexer.rebuild()
    print(`reindexed: ${applied} changes applied`)
  } finally {
    await search.close()
    await data.store.close()
  }
}

/** Applies an NDJSON file; rejected lines go to `warn`. False when any line was rejected. */
export async function importCommand(file: string, options: DataOptions, print: Print, warn: Print): Promise<boolean> {
  // Before the data directory or database is opened: a mistyped name must create nothing.
  const found = await stat(file).catch(() => null)
  if (found === null) throw new UsageError(`import: no such file: ${file}`)
  if (found.isDirectory()) throw new UsageError(`import: ${file} is a directory, not an NDJSON file`)
  const data = await openData(options)
  const progress = createProgress('import', { unit: 'lines' })
  try {
    const report = await importFile(file, data, progress)
    progress.done()
    for (const error of report.errors.sort((a, b) => a.line - b.line)) warn(`line ${error.line}: ${error.message}`)
    print(`applied ${report.applied}, unchanged ${report.unchanged}, rejected ${report.errors.length}`)
    return report.errors.length === 0
  } finally {
    await data.store.close()
  }
}

export async function createKeyCommand(options: DataOptions, print: Print): Promise<void> {
  const data = await openData(options)
  try {
    const key = generateApiKey()
    await data.store.addKeyHash(await hashApiKey(key))
    print(key)
  } finally {
    await data.store.close()
  }
}

function importFile(file: string, { store, blobs }: OpenedData, progress?: Progress): Promise<ImportReport> {
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity })
  return importNdjson(progress ? counted(lines, progress) : lines, { warehouse: store.warehouse, blobs, baseDir: baseDirOf(file) })
}
