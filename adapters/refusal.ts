/**
 * What every adapter answers by itself, before a request reaches the handler or when the handler
 * fails: JSON:API error documents, so that a client reads one shape of error whatever the runtime.
 */

import type { ClientInfo } from '../src/http/answer.js'

/** Anything with a Web-standard fetch handler, such as a registry; `client` is for those that read it. */
export interface FetchHandler {
  fetch(request: Request, client?: ClientInfo): Promise<Response>
}

/** Why a request was refused before it reached the handler. */
export class RequestRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message)
  }
}

/** Methods the Fetch standard forbids in a `Request`; this read-only service allows none of them anyway. */
export const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK'])
export const ALLOW = 'GET, HEAD, OPTIONS'

export const methodNotAllowed = () =>
  new RequestRefusal(405, 'method_not_allowed', 'this service is read-only: use GET or HEAD', { Allow: ALLOW })

export const TITLES: Record<number, string> = {
  400: 'Bad request',
  405: 'Method not allowed',
  408: 'Request timeout',
  413: 'Content too large',
  414: 'URI too long',
  431: 'Request header fields too large',
  500: 'Internal server error',
}

export function errorBody(status: number, code: string, detail: string): string {
  return JSON.stringify({ errors: [{ status: String(status), code, title: TITLES[status] ?? 'Error', detail }] })
}

export function refusalResponse(refusal: RequestRefusal): Response {
  return new Response(errorBody(refusal.status, refusal.code, refusal.message), {
    status: refusal.status,
    headers: { ...refusal.headers, 'Content-Type': 'application/vnd.api+json' },
  })
}

export const internalError = () => new RequestRefusal(500, 'internal_error', 'the server failed to answer this request')

/** The first of a header's comma-separated values, as proxies append theirs. */
export function firstValue(header: string | string[] | null | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header
  return value?.split(',')[0]?.trim() || undefined
}

/**
 * The client's address as a trusted proxy saw it: the last of X-Forwarded-For's values, the one that
 * proxy appended (those before it are whatever the client sent).
 */
export function forwardedClient(header: string | string[] | null | undefined): string | undefined {
  const value = Array.isArray(header) ? header.at(-1) : header
  return value?.split(',').at(-1)?.trim() || undefined
}

/** A trusted proxy's X-Forwarded-Proto, which must be http or https. */
export function forwardedProtocol(header: string | string[] | null | undefined): 'http' | 'https' | undefined {
  const protocol = firstValue(header)?.toLowerCase()
  if (protocol === undefined || protocol === 'http' || protocol === 'https') return protocol
  throw new RequestRefusal(400, 'bad_request', 'X-Forwarded-Proto must be http or https')
}
