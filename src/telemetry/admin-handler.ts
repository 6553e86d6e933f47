import type { Metrics } from './metrics.js'
import type { Readiness } from './readiness.js'

export interface AdminHandlerOptions {
  readiness: Readiness
  /** Served by `/metrics`; without it `/metrics` is 404. */
  metrics?: Metrics
  /** Where the handler is mounted (`/admin`); stripped before matching. Default none. */
  basePath?: string
}

export interface AdminHandler {
  fetch(request: Request): Promise<Response>
}

const JSON_TYPE = { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' }

/**
 * `GET /live` (200 while the process answers), `GET /ready` (200 when every readiness check passes,
 * else 503 naming what is not ready; with the search index's lag once it is open) and `GET /metrics` (Prometheus text). It asks for no key: serve
 * it where only probes and scrapers reach (the CLI's `--admin-port`), or behind your own guard.
 */
export function createAdminHandler({ readiness, metrics, basePath = '' }: AdminHandlerOptions): AdminHandler {
  const base = basePath.replace(/\/+$/, '')
  const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: JSON_TYPE })
  return {
    async fetch(request) {
      const path = new URL(request.url).pathname
      const route = path.startsWith(base) ? path.slice(base.length) : null
      if (route !== '/live' && route !== '/ready' && (route !== '/metrics' || !metrics)) return json(404, { error: 'no such endpoint: use /live, /ready or /metrics' })
      if (request.method !== 'GET' && request.method !== 'HEAD') return new Response(null, { status: 405, headers: { Allow: 'GET, HEAD' } })
      if (route === '/live') return json(200, { status: 'live' })
      if (route === '/ready') {
        const { ready, checks, searchIndexLag, replicaLag } = await readiness.check()
        return json(ready ? 200 : 503, { status: ready ? 'ready' : 'not ready', checks, ...(searchIndexLag ? { searchIndexLag } : {}), ...(replicaLag ? { replicaLag } : {}) })
      }
      return new Response(await metrics!.register.metrics(), { status: 200, headers: { 'Content-Type': metrics!.register.contentType, 'Cache-Control': 'no-store' } })
    },
  }
}
