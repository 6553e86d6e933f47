// @ts-check
// Serves the registry over the LMDB store: `npm start`. The first start imports the demo data
// bundled with entity-registry; later starts serve what is in the data directory.
//
//   PORT          port to listen on (default 8080; 0 picks a free one)
//   HOST          address to listen on (default 127.0.0.1)
//   ENTITY_REGISTRY_API_KEYS   comma-separated API keys accepted as bearer tokens
//   DATA_DIR      where the LMDB files and rendition blobs live (default .data beside this file)
import { createReadStream } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { createApiKeyAuthenticator, createKeyManager, createRegistry } from 'entity-registry'
import { createFileBlobStore, importNdjson, serve } from 'entity-registry/node'
import { createLmdbStore } from './lmdb-store.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const dataDir = resolve(process.env.DATA_DIR || join(here, '.data'))
const port = Number(process.env.PORT ?? 8080)
const host = process.env.HOST || '127.0.0.1'
const keys = (process.env.ENTITY_REGISTRY_API_KEYS ?? '')
  .split(',')
  .map((key) => key.trim())
  .filter((key) => key !== '')

const store = createLmdbStore({ path: join(dataDir, 'lmdb') })
// Rendition files (the demo's HTML and PDF texts) are kept as files, as the CLI keeps them.
const blobs = createFileBlobStore(join(dataDir, 'blobs'))

if ((await store.feedHead()) === null) {
  // The demo NDJSON ships inside the installed package; rendition `file` paths are relative to it.
  const packageDir = dirname(createRequire(import.meta.url).resolve('entity-registry/package.json'))
  const demoFile = join(packageDir, 'demo', 'entities.jsonl')
  const lines = createInterface({ input: createReadStream(demoFile), crlfDelay: Infinity })
  const report = await importNdjson(lines, { warehouse: store.warehouse, blobs, baseDir: dirname(demoFile) })
  console.log(`imported the demo data: ${report.applied} entities`)
}

if (keys.length === 0 && (await store.countApiKeys()) === 0) {
  // No key configured: make one, keep only its hash in the store, and show it this once.
  const { key } = await createKeyManager(store).createKey({ org: 'default' })
  console.log(`created an API key (shown once, kept only hashed): ${key}`)
}

const registry = createRegistry({ store, blobs, auth: createApiKeyAuthenticator({ keys, store }) })
const server = await serve(registry, { port, host })
console.log(`listening on ${server.url}`)

let closing = false
async function shutdown() {
  if (closing) return
  closing = true
  await server.close()
  await store.close()
}
process.once('SIGINT', shutdown)
process.once('SIGTERM', shutdown)
