// entity-registry under Bun: the embedded defaults (SQLite, rendition files, LanceDB search) in
// .data/, served by Bun.serve. Under Bun the SQLite store uses the built-in node:sqlite, because
// Bun refuses to load better-sqlite3 (the store picks it by itself).
import { serve } from 'entity-registry/bun'
import { openEmbeddedRegistry } from 'entity-registry/node'

const { registry, close } = await openEmbeddedRegistry({
  data: process.env.DATA_DIR ?? new URL('./.data', import.meta.url).pathname,
  demo: true,
  apiKeys: (process.env.ENTITY_REGISTRY_API_KEYS ?? '').split(',').filter((key) => key !== ''),
  // The page to browse the registry, at / and /explore.
  explorer: true,
})
const server = await serve(registry, { port: Number(process.env.PORT ?? 8080), hostname: process.env.HOST ?? '127.0.0.1' })
console.log(`listening on ${server.url}`)

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    await server.close()
    await close()
    process.exit(0)
  })
}
