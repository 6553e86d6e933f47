import { createReadStream } from 'node:fs'
import { createInterface } from 'node:readline'
import { serve as serveNode } from '../../adapters/node.js'
import { createApiKeyAuthenticator, generateApiKey, hashApiKey } from '../auth/api-keys.js'
import { createTokenBucketRateLimiter } from '../rate-limit/token-bucket.js'
import { createRegistry } from '../registry.js'
import { baseDirOf, importNdjson, type ImportReport } from '../warehouse/import.js'
import { bundledDemoFile, openData, type DataOptions, type OpenedData } from './data-dir.js'

export interface ServeOptions extends DataOptions {
  port: number
  host: string
  apiKeys: string[]
  /** Requests per minute per key; 0 turns limiting off. */
  rateLimit: number
  demo: boolean
  baseUrl?: string
  trustProxy: boolean
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
    await data.store.addKeyHash(hashApiKey(key))
    print(`created an API key (shown once, kept only hashed): ${key}`)
  }
  const registry = createRegistry({
    store: data.store,
    blobs: data.blobs,
    auth: createApiKeyAuthenticator({ keys: options.apiKeys, store: data.store }),
    ...(options.rateLimit > 0 ? { rateLimit: createTokenBucketRateLimiter({ limit: options.rateLimit }) } : {}),
    ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}),
  })
  const server = await serveNode(registry, { port: options.port, host: options.host, trustProxy: options.trustProxy })
  print(`listening on ${server.url}`)
  return async () => {
    await server.close()
    await data.store.close()
  }
}

export async function importCommand(file: string, options: DataOptions, print: Print): Promise<boolean> {
  const data = await openData(options)
  try {
    const report = await importFile(file, data)
    for (const error of report.errors) print(`line ${error.line}: ${error.message}`)
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
    await data.store.addKeyHash(hashApiKey(key))
    print(key)
  } finally {
    await data.store.close()
  }
}

function importFile(file: string, { store, blobs }: OpenedData): Promise<ImportReport> {
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity })
  return importNdjson(lines, { warehouse: store.warehouse, blobs, baseDir: baseDirOf(file) })
}
