// The registry, mounted at /api/registry: every path below it (`/api/registry/v1/entities`, ...)
// reaches this one catch-all route. Links are absolute, on the origin each request came to.
import { createRouteHandlers } from 'entity-registry/next'
import { openEmbeddedRegistry } from 'entity-registry/node'

// The registry keeps a database connection and a search index: Node, not the Edge runtime.
export const runtime = 'nodejs'
export const dynamic = 'force-dynamic'

export const { GET, HEAD, OPTIONS, POST, PUT, PATCH, DELETE } = createRouteHandlers(
  // Opened at the first request, not while `next build` loads this module.
  async () =>
    (
      await openEmbeddedRegistry({
        data: process.env.DATA_DIR ?? '.data',
        demo: true,
        apiKeys: (process.env.ENTITY_REGISTRY_API_KEYS ?? '').split(',').filter((key) => key !== ''),
        baseUrl: '/api/registry',
        // The page to browse the registry, at /api/registry/explore.
        explorer: true,
        // Requests a minute per key; 0 turns limiting off.
        rateLimit: Number(process.env.RATE_LIMIT ?? 600),
      })
    ).registry,
  // Behind a proxy you trust, links follow X-Forwarded-Host and X-Forwarded-Proto.
  { trustProxy: process.env.TRUST_PROXY === '1' },
)
