import { stat } from 'node:fs/promises'
import { serve as serveNode } from '../../adapters/node.js'
import { generateApiKey, hashApiKey } from '../auth/api-keys.js'
import { importFile, openEmbeddedRegistry, type EmbeddedRegistryOptions } from '../node/embedded-registry.js'
import type { Registry } from '../registry.js'
import { UsageError } from './arguments.js'
import { openData, type DataOptions } from '../node/data-dir.js'
import { createProgress } from './progress.js'

export interface ServeOptions extends EmbeddedRegistryOptions {
  port: number
  host: string
  trustProxy: boolean
  /** The admin listener's port (`/live`, `/ready`, `/metrics`); none when absent. */
  adminPort?: number
  adminHost: string
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'
  logFormat: 'json' | 'pretty'
  /** A response whose client has read nothing for this long is closed. */
  sendTimeoutMs: number
  /** How long requests in flight may take to finish after SIGTERM or SIGINT. */
  shutdownTimeoutMs: number
}

export type Print = (line: string) => void

export async function serveCommand(options: ServeOptions, print: Print): Promise<() => Promise<void>> {
  const { registry, close } = await openEmbeddedRegistry({ ...options, print })
  const server = await listen(registry, options)
  print(`listening on ${server.url}`)
  return async () => {
    await server.close()
    await close()
  }
}

/**
 * Bun's and Deno's own servers under those runtimes (`bunx entity-registry serve`), node:http
 * elsewhere: each runtime's fastest way to serve.
 */
async function listen(registry: Registry, { port, host, trustProxy, sendTimeoutMs }: ServeOptions): Promise<{ url: string; close(): Promise<void> }> {
  if ('Bun' in globalThis) return (await import('../../adapters/bun.js')).serve(registry, { port, hostname: host, trustProxy })
  if ('Deno' in globalThis) return (await import('../../adapters/deno.js')).serve(registry, { port, hostname: host, trustProxy })
  return serveNode(registry, { port, host, trustProxy, sendTimeoutMs })
}

/** Rebuilds the search index from the store's feed, printing progress and rate. */
export async function reindexCommand(options: DataOptions & { search?: string; embedder?: string }, print: Print): Promise<void> {
  const data = await openData(options)
  const { openSearch, searchLocation } = await import('../node/search-setup.js')
  const search = await openSearch(data.store, searchLocation(options), { print, rebuilding: true, ...(options.embedder ? { embedderName: options.embedder } : {}) })
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
    const report = await importFile(file, data, () => progress.add())
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
