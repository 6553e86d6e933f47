// The registry, mounted at /api/registry: every path below it (`/api/registry/v1/entities`, ...)
// reaches this one catch-all route. Links are absolute, on the origin each request came to.
import { createRouteHandlers } from 'entity-registry/next'
import { registry } from '../../../../lib/registry'

// The registry holds a PostgreSQL pool: Node, not the Edge runtime.
export const runtime = 'nodejs'
export const dynamic = 'force-dynamic'

// Behind a proxy you trust, links follow X-Forwarded-Host and X-Forwarded-Proto.
export const { GET, HEAD, OPTIONS, POST, PUT, PATCH, DELETE } = createRouteHandlers(registry, { trustProxy: process.env.TRUST_PROXY === '1' })
