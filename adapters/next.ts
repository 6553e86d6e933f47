/**
 * `entity-registry/next`: App Router route handlers. Put the registry in a catch-all route such as
 * `app/api/registry/[[...path]]/route.ts` and create it with `baseUrl: '/api/registry'` (links on
 * the request's origin) or an absolute `baseUrl` (links on that public origin):
 *
 * ```ts
 * export const { GET, HEAD, OPTIONS } = createRouteHandlers(openRegistry())
 * ```
 */
import { toFetch, type FetchHandler, type WebAdapterOptions } from './web.js'

export type { FetchHandler, WebAdapterOptions } from './web.js'

export type RouteHandler = (request: Request) => Promise<Response>

export interface RouteHandlers {
  GET: RouteHandler
  HEAD: RouteHandler
  OPTIONS: RouteHandler
}

/**
 * The route's exports, over a handler or the promise of one: a registry whose store opens
 * asynchronously is created once, when the module loads, and every request waits for it.
 */
export function createRouteHandlers(handler: FetchHandler | Promise<FetchHandler>, options: WebAdapterOptions = {}): RouteHandlers {
  const fetch = toFetch(handler, options)
  // Next calls a handler with a second argument (the route's params), which the registry does not use.
  const route: RouteHandler = (request) => fetch(request)
  return { GET: route, HEAD: route, OPTIONS: route }
}
