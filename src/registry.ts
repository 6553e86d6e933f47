import { HttpError } from './http/errors.js'
import { Links } from './http/links.js'
import { isAcceptable, isSupportedContentType } from './http/media-type.js'
import { createOpenApiDocument } from './http/openapi.js'
import { jsonApiResponse } from './http/responses.js'
import { ALLOWED_METHODS, createRouter } from './http/router.js'
import type { Authenticator } from './ports/auth.js'
import type { BlobStore } from './ports/blob-store.js'
import type { EntityStore } from './ports/entity-store.js'
import type { RateLimitDecision, RateLimiter } from './ports/rate-limiter.js'
import type { Search } from './search/search-service.js'

export interface RegistryOptions {
  store: EntityStore
  auth: Authenticator
  /** Rendition bytes; without it every download is 404. */
  blobs?: BlobStore
  /** Search (`createSearch`); without it `/v1/search` answers 500 search_failed. */
  search?: Search
  /** Without one, requests are not limited. */
  rateLimit?: RateLimiter
  /**
   * Where the API is mounted: an absolute URL (`https://api.example.org/registry`), on which links
   * are built whatever the request's origin, or a path (`/api/registry`), which links put after the
   * request's own origin. Its path is stripped before routing. Default: the request's own origin.
   */
  baseUrl?: string
  /** How many change records one changes request scans at most (default 10,000). */
  changesWindow?: number
  /** Called with an unexpected error before a 500 is answered; the response never shows it. */
  onError?: (error: unknown, request: Request) => void
}

export interface Registry {
  fetch(request: Request): Promise<Response>
}

const CORS_HEADERS = {
  // No answer of this API is to be sniffed into another type (rendition downloads above all).
  'X-Content-Type-Options': 'nosniff',
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers':
    'Content-Language, Content-Disposition, Content-Location, Content-Range, ETag, Link, Retry-After, RateLimit, RateLimit-Policy, Change-Feed-Head',
}

const PREFLIGHT_HEADERS = {
  ...CORS_HEADERS,
  'Access-Control-Allow-Methods': ALLOWED_METHODS,
  'Access-Control-Allow-Headers': 'Authorization, Accept, Content-Type, Range, If-None-Match, If-Range',
  'Access-Control-Max-Age': '86400',
  Allow: ALLOWED_METHODS,
}

/** The whole service as one Web-standard handler over the given ports. */
export function createRegistry(options: RegistryOptions): Registry {
  const base = options.baseUrl?.replace(/\/+$/, '')
  const pathOnly = base === undefined || base === '' || base.startsWith('/')
  const basePath = pathOnly ? (base ?? '') : new URL(base).pathname.replace(/\/+$/, '')
  /** Links are absolute: on the configured URL, or on the origin the request came to. */
  const linkBase = (url: URL) => (pathOnly ? url.origin + basePath : base)
  const route = createRouter(basePath)
  const openApiPath = `${basePath}/v1/openapi.json`
  const changesWindow = options.changesWindow ?? 10_000
  const onError = options.onError ?? ((error) => console.error('entity-registry: unexpected error', error))

  const errorResponse = (thrown: unknown, request: Request): Response => {
    let error: HttpError
    if (thrown instanceof HttpError) {
      error = thrown
      if (error.status >= 500 && error.cause !== undefined) onError(error.cause, request)
    } else {
      onError(thrown, request)
      error = new HttpError('internal_error', 'the server failed to answer this request')
    }
    return jsonApiResponse(error.toDocument(), error.status, error.headers)
  }

  /** After authentication: every answer, errors included, carries the rate-limit headers. */
  async function serve(request: Request): Promise<Response> {
    if (!isAcceptable(request.headers.get('Accept'))) {
      throw new HttpError('not_acceptable', 'Accept allows application/vnd.api+json only with parameters other than ext and profile')
    }
    if (!isSupportedContentType(request.headers.get('Content-Type'))) {
      throw new HttpError('unsupported_media_type', 'Content-Type application/vnd.api+json may carry only ext and profile parameters')
    }
    const url = new URL(request.url)
    const links = new Links(linkBase(url))
    const head = request.method === 'HEAD'
    return route({ request, url, links, head, store: options.store, blobs: options.blobs, search: options.search, changesWindow })
  }

  async function handle(request: Request): Promise<Response> {
    if (request.method === 'OPTIONS') return new Response(null, { status: 204, headers: PREFLIGHT_HEADERS })
    // The interface's description is public: tools and clients read it before they hold a key.
    if ((request.method === 'GET' || request.method === 'HEAD') && new URL(request.url).pathname === openApiPath) {
      return Response.json(createOpenApiDocument(linkBase(new URL(request.url))))
    }
    const principal = await options.auth.authenticate(bearerToken(request), request)
    if (principal === null) {
      throw new HttpError('unauthorized', 'a valid API key is required: Authorization: Bearer <API_KEY>', undefined, {
        'WWW-Authenticate': 'Bearer',
      })
    }
    const decision = await options.rateLimit?.take(principal.id)
    let response: Response
    if (decision && !decision.allowed) {
      response = errorResponse(
        new HttpError('rate_limited', `rate limit exceeded; retry after ${decision.retryAfterSeconds} s`, undefined, {
          'Retry-After': String(decision.retryAfterSeconds),
        }),
        request,
      )
    } else {
      response = await serve(request).catch((thrown: unknown) => errorResponse(thrown, request))
    }
    return decision ? withHeaders(response, rateLimitHeaders(decision)) : response
  }

  return {
    async fetch(request) {
      const response = await handle(request).catch((thrown: unknown) => errorResponse(thrown, request))
      return finish(response, request.method === 'HEAD')
    },
  }
}

function bearerToken(request: Request): string | null {
  const header = request.headers.get('Authorization')
  const match = header === null ? null : /^Bearer[ ]+(\S+)\s*$/i.exec(header)
  return match?.[1] ?? null
}

/** IETF draft-ietf-httpapi-ratelimit-headers: one policy, named "default". */
function rateLimitHeaders(decision: RateLimitDecision): Record<string, string> {
  return {
    'RateLimit-Policy': `"default";q=${decision.limit};w=${decision.windowSeconds}`,
    RateLimit: `"default";r=${decision.remaining};t=${decision.resetSeconds}`,
  }
}

function withHeaders(response: Response, headers: Record<string, string>): Response {
  for (const [name, value] of Object.entries(headers)) response.headers.set(name, value)
  return response
}

/** CORS on every response; a HEAD answer keeps GET's headers and drops the body. */
function finish(response: Response, head: boolean): Response {
  withHeaders(response, CORS_HEADERS)
  if (!head || response.body === null) return response
  void response.body.cancel()
  return new Response(null, { status: response.status, headers: response.headers })
}
