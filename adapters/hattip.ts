/**
 * `entity-registry/hattip`: a Hattip handler, which Hattip's own adapters serve on Node,
 * uWebSockets, Cloudflare Workers, Vercel, Netlify and more. Hattip's adapters read the forwarded
 * headers themselves (their `trustProxy` option), so this adapter leaves the request's URL as it is.
 */
import { toFetch, type HandlerSource } from './web.js'

export type { FetchHandler, HandlerSource } from './web.js'

/** The part of Hattip's request context the registry needs; `@hattip/core`'s context has it. */
export interface HattipRequestContext {
  request: Request
  /** The client's address, as Hattip's adapter reads it (behind a proxy, with its `trustProxy`). */
  ip?: string
}

export type HattipFetchHandler = (context: HattipRequestContext) => Promise<Response>

/** A Hattip handler over a fetch handler, or the promise of one. */
export function createHattipHandler(handler: HandlerSource): HattipFetchHandler {
  const fetch = toFetch(handler)
  return (context) => fetch(context.request, context.ip === undefined ? {} : { address: context.ip })
}
