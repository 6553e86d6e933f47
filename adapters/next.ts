/**
 * `entity-registry/next`: App Router route handlers. Put the registry in a catch-all route such as
 * `app/api/registry/[[...path]]/route.ts` and create it with `baseUrl: '/api/registry'` (links on
 * the request's origin) or an absolute `baseUrl` (links on that public origin):
 *
 * ```ts
 * export const { GET, HEAD, OPTIONS, POST, PUT, PATCH, DELETE } = createRouteHandlers(() => openRegistry())
 * ```
 */
import { toFetch, type HandlerSource, type WebAdapterOptions } from './web.js'

export type { FetchHandler, HandlerSource, WebAdapterOptions } from './web.js'

export type RouteHandler = (request: Request) => Promise<Response>

/** Every method: the registry answers writes with its own 405 document, not Next's bare one. */
export interface RouteHandlers {
  GET: RouteHandler
  HEAD: RouteHandler
  OPTIONS: RouteHandler
  POST: RouteHandler
  PUT: RouteHandler
  PATCH: RouteHandler
  DELETE: RouteHandler
}

/**
 * The route's exports. Pass a function that opens the registry: it is called at the first request,
 * not when `next build` loads the module, and every request waits for it.
 */
export function createRouteHandlers(handler: HandlerSource, options: WebAdapterOptions = {}): RouteHandlers {
  // Next builds `request.url` on the host it was started with ("localhost"), whatever the client asked.
  const fetch = toFetch(handler, { ...options, hostFromHeader: true })
  // Next calls a handler with a second argument (the route's params), which the registry does not use.
  const route: RouteHandler = (request) => fetch(request)
  return { GET: route, HEAD: route, OPTIONS: route, POST: route, PUT: route, PATCH: route, DELETE: route }
}
