import { readFileSync } from 'node:fs'
import { afterAll, beforeAll } from 'vitest'
import { fileURLToPath } from 'node:url'
import { createApiKeyAuthenticator } from '../../src/auth/api-keys.js'
import { createMemoryBlobStore } from '../../src/memory/memory-blob-store.js'
import type { BlobStore } from '../../src/ports/blob-store.js'
import type { EntityStore } from '../../src/ports/entity-store.js'
import type { Warehouse } from '../../src/ports/warehouse.js'
import { createRegistry, type RegistryOptions } from '../../src/registry.js'
import { importNdjson } from '../../src/warehouse/import.js'

export const DEMO_FILE = fileURLToPath(new URL('../../demo/entities.jsonl', import.meta.url))
export const DEMO_LINES = readFileSync(DEMO_FILE, 'utf8').split('\n').filter((line) => line.trim() !== '')
export const DEMO_RECORDS: Array<Record<string, unknown> & { id: string; type: string }> = DEMO_LINES.map((line) => JSON.parse(line))

export const API_KEY = 'test-key-0123456789'
export const BASE = 'http://registry.test'

export async function importDemo(warehouse: Warehouse, blobs: BlobStore = createMemoryBlobStore()) {
  const report = await importNdjson(DEMO_LINES, { warehouse, blobs, baseDir: fileURLToPath(new URL('../../demo/', import.meta.url)) })
  if (report.errors.length > 0) throw new Error(`demo import failed: ${JSON.stringify(report.errors)}`)
  return blobs
}

/** A registry over a store, with one API key; `get(path)` sends an authenticated GET. */
export function testRegistry(store: EntityStore, options: Partial<RegistryOptions> = {}) {
  const registry = createRegistry({ store, auth: createApiKeyAuthenticator({ keys: [API_KEY] }), ...options })
  const get = (path: string, init: RequestInit = {}) =>
    registry.fetch(
      new Request(path.startsWith('http') ? path : `${BASE}${path}`, {
        ...init,
        headers: { Authorization: `Bearer ${API_KEY}`, ...(init.headers as Record<string, string> | undefined) },
      }),
    )
  return { registry, get }
}

/** In a suite: a store of the dialect with the demo data imported, and a registry over it. */
export function useDemoRegistry<S extends EntityStore & { warehouse: Warehouse; close(): Promise<void> }>(
  dialect: { open(): Promise<S> },
  options: Partial<RegistryOptions> = {},
) {
  let store: S | undefined
  let registry: ReturnType<typeof testRegistry> | undefined
  beforeAll(async () => {
    store = await dialect.open()
    await importDemo(store.warehouse)
    registry = testRegistry(store, options)
  })
  afterAll(() => store?.close())
  return {
    store: () => store!,
    get: (path: string, init?: RequestInit) => registry!.get(path, init),
  }
}
