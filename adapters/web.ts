/**
 * The edge shared by the runtimes that hand over a Web `Request` already (Bun, Deno, Next.js,
 * Hattip): the public URL behind a trusted proxy, and JSON:API answers for what the handler cannot
 * take, so that no request makes the runtime print its own error page.
 */
import {
  FORBIDDEN_METHODS,
  firstValue,
  forwardedProtocol,
  internalError,
  methodNotAllowed,
  refusalResponse,
  RequestRefusal,
  type FetchHandler,
} from './refusal.js'

export type { FetchHandler } from './refusal.js'

export interface WebAdapterOptions {
  /** Take the public protocol and host from X-Forwarded-Proto / X-Forwarded-Host (behind a proxy you trust). */
  trustProxy?: boolean
}

/**
 * A `(request) => response` function over a handler, or over the promise of one (a registry whose
 * store opens asynchronously): it answers every request, with a 500 document if the handler throws
 * or never came to be.
 */
export function toFetch(handler: FetchHandler | Promise<FetchHandler>, { trustProxy = false }: WebAdapterOptions = {}): (request: Request) => Promise<Response> {
  const ready = Promise.resolve(handler)
  // Not unhandled: every request that waits on it reports the failure as a 500.
  ready.catch(() => {})
  return async (request) => {
    let publicRequest: Request
    try {
      publicRequest = toPublicRequest(request, trustProxy)
    } catch (error) {
      return refusalResponse(error instanceof RequestRefusal ? error : new RequestRefusal(400, 'bad_request', 'the request cannot be read'))
    }
    try {
      return await (await ready).fetch(publicRequest)
    } catch {
      return refusalResponse(internalError())
    }
  }
}

function toPublicRequest(request: Request, trustProxy: boolean): Request {
  if (FORBIDDEN_METHODS.has(request.method.toUpperCase())) throw methodNotAllowed()
  // Bun builds `request.url` from the Host header as it came ("http://x:99999/"), valid or not.
  const url = parseUrl(request.url)
  if (url === null) throw new RequestRefusal(400, 'bad_request', 'the Host header and the request target do not form a valid URL')
  if (!trustProxy) return request
  const protocol = forwardedProtocol(request.headers.get('x-forwarded-proto'))
  const host = firstValue(request.headers.get('x-forwarded-host'))
  if (protocol === undefined && host === undefined) return request
  const publicUrl = parseUrl(`${protocol ?? url.protocol.slice(0, -1)}://${host ?? url.host}${url.pathname}${url.search}`)
  if (publicUrl === null) throw new RequestRefusal(400, 'bad_request', 'the X-Forwarded-Host header does not form a valid URL')
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
