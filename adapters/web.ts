/**
 * The edge shared by the runtimes that hand over a Web `Request` already (Bun, Deno, Next.js,
 * Hattip): the public URL behind a trusted proxy, and JSON:API answers for what the handler cannot
 * take, so that no request makes the runtime print its own error page.
 */
import {
  FORBIDDEN_METHODS,
  firstValue,
  forwardedClient,
  forwardedProtocol,
  internalError,
  methodNotAllowed,
  refusalResponse,
  RequestRefusal,
  type FetchHandler,
} from './refusal.js'

import type { ClientInfo } from '../src/http/answer.js'

export type { FetchHandler } from './refusal.js'

export interface WebAdapterOptions {
  /**
   * Take the public protocol and host from X-Forwarded-Proto / X-Forwarded-Host, and the client's
   * address from X-Forwarded-For (behind a proxy you trust).
   */
  trustProxy?: boolean
}

/**
 * A handler; the promise of one (a registry whose store opens asynchronously); or a function that
 * makes one, called at the first request (so that a build step that loads the module, as
 * `next build` does, opens nothing).
 */
export type HandlerSource = FetchHandler | Promise<FetchHandler> | (() => FetchHandler | Promise<FetchHandler>)

/**
 * A `(request) => response` function over a handler: it answers every request, with a 500 document
 * if the handler throws or never came to be.
 */
export function toFetch(source: HandlerSource, options: WebAdapterOptions & EdgeOptions = {}): (request: Request, client?: ClientInfo) => Promise<Response> {
  let handler: Promise<FetchHandler> | undefined
  const ready = () => {
    if (handler === undefined) {
      handler = Promise.resolve(typeof source === 'function' ? source() : source)
      // Not unhandled: every request that waits on it reports the failure as a 500.
      handler.catch(() => {})
    }
    return handler
  }
  if (typeof source !== 'function') ready()
  return async (request, client = {}) => {
    let publicRequest: Request
    try {
      publicRequest = toPublicRequest(request, options)
    } catch (error) {
      return refusalResponse(error instanceof RequestRefusal ? error : new RequestRefusal(400, 'bad_request', 'the request cannot be read'))
    }
    try {
      const address = (options.trustProxy ? forwardedClient(request.headers.get('x-forwarded-for')) : undefined) ?? client.address
      return await (await ready()).fetch(publicRequest, { ...(address === undefined ? {} : { address }), ...(client.holdOpen ? { holdOpen: client.holdOpen } : {}) })
    } catch {
      return refusalResponse(internalError())
    }
  }
}

/** What an adapter knows of its runtime's requests. */
export interface EdgeOptions {
  /**
   * The runtime builds `request.url` on a host of its own (Next.js: the server's bound name), not
   * on the Host header the client sent: take the host from the header.
   */
  hostFromHeader?: boolean
}

function toPublicRequest(request: Request, { trustProxy = false, hostFromHeader = false }: WebAdapterOptions & EdgeOptions): Request {
  if (FORBIDDEN_METHODS.has(request.method.toUpperCase())) throw methodNotAllowed()
  // Bun builds `request.url` from the Host header as it came ("http://x:99999/"), valid or not.
  const url = parseUrl(request.url)
  if (url === null) throw new RequestRefusal(400, 'bad_request', 'the Host header and the request target do not form a valid URL')
  const protocol = trustProxy ? forwardedProtocol(request.headers.get('x-forwarded-proto')) : undefined
  const host = (trustProxy ? firstValue(request.headers.get('x-forwarded-host')) : undefined) ?? (hostFromHeader ? (request.headers.get('host') ?? undefined) : undefined)
  if (protocol === undefined && (host === undefined || host === url.host)) return request
  const publicUrl = parseUrl(`${protocol ?? url.protocol.slice(0, -1)}://${host ?? url.host}${url.pathname}${url.search}`)
  if (publicUrl === null) throw new RequestRefusal(400, 'bad_request', 'the Host or X-Forwarded-Host header does not form a valid URL')
  return new Request(publicUrl, request)
}

/** `URL.parse`, which Node has only from 20.18 on. */
function parseUrl(url: string): URL | null {
  try {
    return new URL(url)
  } catch {
    return null
  }
}
