import { toResponse, withoutBody, type Answer, type ClientInfo, type RequestView } from './http/answer.js'
import { HttpError } from './http/errors.js'
import { createExplorerRoute } from './http/explorer.js'
import { Links } from './http/links.js'
import { isAcceptable, isSupportedContentType } from './http/media-type.js'
import { jsonApiAnswer } from './http/responses.js'
import { ALLOWED_METHODS, createRouter } from './http/router.js'
import type { RequestContext } from './http/context.js'
import type { Authenticator, Principal } from './ports/auth.js'
import type { BlobStore } from './ports/blob-store.js'
import { isDependencyUnavailable } from './ports/dependency.js'
import type { EntityStore } from './ports/entity-store.js'
import type { RateLimitDecision, RateLimiter } from './ports/rate-limiter.js'
import { createTokenBuckets } from './rate-limit/token-bucket.js'
import type { Search } from './search/search-service.js'
import type { RequestRecord, Telemetry } from './ports/telemetry.js'
import type { ChangeNotifier } from './ports/change-notifier.js'
import { createFeedWaits } from './live-feed/feed-waits.js'
import { pollingNotifier } from './live-feed/notifiers.js'
import { createOpenStreams } from './live-feed/open-streams.js'
import { requestIdOf } from './http/request-id.js'

export interface RegistryOptions {
  store: EntityStore
  auth: Authenticator
  /** Rendition bytes; without it every download is 404. */
  blobs?: BlobStore
  /**
   * Search (`createSearch`); without it `/v1/search` answers 404 search_disabled. A promise (an index
   * still opening) holds up search requests only, until it settles; one that gives none (the index
   * could not be opened) makes them 500 search_failed.
   */
  search?: Search | PromiseLike<Search | undefined>
  /** Without one, requests are not limited. */
  rateLimit?: RateLimiter
  /**
   * What a rate limit counts: each key's requests (`key`, default), or all the requests of an
   * organization's keys together (`org`; a principal with no organization is counted by its key).
   */
  rateLimitScope?: 'key' | 'org'
  /**
   * Requests with a missing or wrong key allowed per minute from one client address (default 60; 0
   * no limit): beyond, until the allowance refills, a request from that address whose key does not
   * verify answers 429 with `Retry-After`; a valid key is served. Its key is checked there by
   * `Authenticator.authenticateKnown` (refused without it): the bundled authenticator looks up a stored
   * key only when its hash is among the stored keys' (read at most once a second, a request not found
   * waiting for a read begun after it came), so made-up keys cost no lookup each. Kept in the process;
   * counted only where the adapter knows the address (every adapter but Next.js's, and that one
   * behind `trustProxy`).
   */
  authFailureLimit?: number
  /**
   * Where the API is mounted: an absolute URL (`https://api.example.org/registry`), on which links
   * are built whatever the request's origin, or a path (`/api/registry`), which links put after the
   * request's own origin. Its path is stripped before routing. Default: the request's own origin.
   */
  baseUrl?: string
  /** How many change records one changes request scans at most (default 10,000). */
  changesWindow?: number
  /**
   * Called with an unexpected error before a 500 is answered (the response never shows it), with the
   * request and its `X-Request-Id`, to log them together.
   */
  onError?: (error: unknown, request: RequestView, requestId: string) => void
  /** Told of every request and of dependencies found away: metrics and access logs (`createTelemetry`). */
  telemetry?: Telemetry
  /**
   * Serve the explorer, a page to browse the registry, at `/` and `/explore` under the base path
   * (default false). The page is public and holds no data: it asks for a key and calls the API with it.
   */
  explorer?: boolean
  /**
   * What wakes the long-polls and event streams of the change feed when a change commits (default:
   * the store's `changeNotifier`; without one, the feed's head read every 250 ms while any waits).
   */
  changeNotifier?: ChangeNotifier
  /**
   * Long-polls and event streams waiting at once at most (default 10,000); past it they are answered
   * 503 `too_many_waiting` with `Retry-After`.
   */
  maxWaiting?: number
}

/** How many requests wait for the change feed. */
export interface WaitingCounts {
  longPolls: number
  streams: number
}

export interface Registry {
  /** `client`: what the adapter knows of the connection (its address, for the limit on failed keys). */
  fetch(request: Request, client?: ClientInfo): Promise<Response>
  /**
   * What `fetch` answers, without Web `Request` and `Response` objects: the Node adapter serves this
   * (on Node they cost more than the rest of a request to the registry).
   */
  answer(request: RequestView, client?: ClientInfo): Promise<Answer>
  /** The long-polls and event streams waiting now. */
  waiting(): WaitingCounts
  /**
   * Answers every waiting long-poll at once (with its page as it stands) and ends every event stream;
   * those that come later are answered without waiting. The first step of a shutdown.
   */
  stopWaiting(): void
}

/** How often the feed's head is read, while any waits, for a store with no notifier of its own. */
const HEAD_POLL_MS = 250

const CORS_HEADERS = {
  // No answer of this API is to be sniffed into another type (rendition downloads above all).
  'X-Content-Type-Options': 'nosniff',
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers':
    'Content-Language, Content-Disposition, Content-Location, Content-Range, ETag, Link, Retry-After, RateLimit, RateLimit-Policy, Change-Feed-Head, Search-Index-Lag, X-Request-Id',
}

const PREFLIGHT_HEADERS = {
  ...CORS_HEADERS,
  'Access-Control-Allow-Methods': ALLOWED_METHODS,
  'Access-Control-Allow-Headers': 'Authorization, Accept, Content-Type, Range, If-None-Match, If-Range, X-Request-Id',
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
  // The links of the last base asked for: requests come to one base, or a few.
  let lastLinks = new Links(base ?? '')
  const linksFor = (url: URL) => {
    const wanted = linkBase(url)
    if (wanted !== lastLinks.base) lastLinks = new Links(wanted)
    return lastLinks
  }
  const route = createRouter(basePath)
  const openApiPath = `${basePath}/v1/openapi.json`
  const explorer = options.explorer === true ? createExplorerRoute(basePath) : undefined
  const changesWindow = options.changesWindow ?? 10_000
  const onError = options.onError ?? ((error) => console.error('entity-registry: unexpected error', error))
  const telemetry = options.telemetry ?? {}
  const byOrganization = options.rateLimitScope === 'org'
  const rateLimitKey = (principal: Principal) => (byOrganization && principal.org !== undefined ? `org:${principal.org}` : `key:${principal.id}`)
  const authFailureLimit = options.authFailureLimit ?? 60
  const authFailures = authFailureLimit > 0 ? createTokenBuckets({ limit: authFailureLimit }) : undefined
  const { store } = options
  const notifier = options.changeNotifier ?? store.changeNotifier ?? pollingNotifier(() => store.feedHead(), HEAD_POLL_MS)
  const streams = createOpenStreams()
  const waits = createFeedWaits(store, notifier, { ...(options.maxWaiting === undefined ? {} : { maxWaiting: options.maxWaiting }), alsoWaiting: () => streams.size })

  const errorAnswer = (thrown: unknown, request: RequestView, requestId: string): Answer => {
    let error: HttpError
    const cause = thrown instanceof HttpError && thrown.status >= 500 ? thrown.cause : undefined
    // A dependency away is a 503 naming it, wherever it was found (search checks results in the store).
    const away = isDependencyUnavailable(thrown) ? thrown : isDependencyUnavailable(cause) ? cause : null
    if (away !== null) {
      telemetry.dependencyFailed?.(away.dependency, away)
      error = new HttpError(`${away.dependency}_unavailable` as const, away.message, undefined, { 'Retry-After': String(away.retryAfterSeconds) })
    } else if (thrown instanceof HttpError) {
      error = thrown
      if (cause !== undefined) onError(cause, request, requestId)
    } else {
      onError(thrown, request, requestId)
      error = new HttpError('internal_error', 'the server failed to answer this request')
    }
    return jsonApiAnswer(JSON.stringify(error.toDocument()), error.status, error.headers)
  }

  /**
   * After authentication: the endpoint's answer (every answer, errors included, then carries the
   * rate-limit headers). Not async: a refusal is thrown before any promise is made.
   */
  function serve(request: RequestView, url: URL, trace: Trace, key: KeyCheck): Promise<Answer> {
    if (!isAcceptable(request.headers.get('Accept'))) {
      throw new HttpError('not_acceptable', 'Accept allows application/vnd.api+json only with parameters other than ext and profile')
    }
    if (!isSupportedContentType(request.headers.get('Content-Type'))) {
      throw new HttpError('unsupported_media_type', 'Content-Type application/vnd.api+json may carry only ext and profile parameters')
    }
    const match = route(url.pathname)
    if (match === null) throw new HttpError('not_found', 'no such endpoint')
    if (request.method !== 'GET' && request.method !== 'HEAD') throw readOnly()
    trace.route = match.path
    const { blobs, search } = options
    return match.handler({
      request,
      url,
      params: match.params,
      links: linksFor(url),
      head: request.method === 'HEAD',
      store,
      blobs,
      search,
      changesWindow,
      waits,
      streams,
      token: key.token,
      keyStillValid: key.stillValid,
      holdOpen: key.holdOpen,
      trace,
    })
  }

  async function handle(request: RequestView, { address, holdOpen }: ClientInfo, trace: Trace): Promise<Answer> {
    if (request.method === 'OPTIONS') return { status: 204, headers: { ...PREFLIGHT_HEADERS }, body: null }
    const url = request.parsedUrl ?? new URL(request.url)
    // The interface's description is public: tools and clients read it before they hold a key.
    if (url.pathname === openApiPath) {
      if (request.method !== 'GET' && request.method !== 'HEAD') throw readOnly()
      // Loaded when asked for: it is built from the zod schemas, which a serving process otherwise never loads.
      const { createOpenApiDocument } = await import('./http/openapi.js')
      return { status: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(createOpenApiDocument(linkBase(url))) }
    }
    const explored = explorer && (request.method === 'GET' || request.method === 'HEAD') ? explorer(url.pathname) : null
    if (explored !== null) {
      const page = await explored
      if (page !== null) {
        trace.route = '/explore'
        return page
      }
    }
    // Past its allowance of failed authentications, an address's keys are still checked, but at a
    // bounded cost (`authenticateKnown`): a made-up key costs no lookup, and a valid one is served.
    const limited = address !== undefined && authFailures?.peek(address).allowed === false
    const { auth } = options
    const token = bearerToken(request)
    const given = !limited ? auth.authenticate(token, request) : auth.authenticateKnown ? auth.authenticateKnown(token, request) : null
    // Awaited only when a promise: an await costs a request a microtask and its allocations.
    const principal = given instanceof Promise ? await given : given
    if (principal === null) {
      // Only a key that does not verify counts against the address, and only such a key is refused 429:
      // as counted now, since an address past its allowance may be within it again after the wait.
      const failures = address === undefined ? undefined : authFailures?.take(address)
      if (failures?.allowed === false) {
        const retryAfter = String(failures.retryAfterSeconds)
        throw new HttpError('rate_limited', `too many requests with a missing or wrong API key from this address; retry after ${retryAfter} s`, undefined, {
          'Retry-After': retryAfter,
        })
      }
      throw new HttpError('unauthorized', 'a valid API key is required: Authorization: Bearer <API_KEY>', undefined, {
        'WWW-Authenticate': 'Bearer',
      })
    }
    trace.principal = principal.id
    const taken = options.rateLimit?.take(rateLimitKey(principal))
    const decision = taken instanceof Promise ? await taken : taken
    let answer: Answer
    if (decision?.counted === false) telemetry.rateLimitBypassed?.()
    if (decision && !decision.allowed) {
      answer = errorAnswer(
        new HttpError('rate_limited', `rate limit exceeded; retry after ${decision.retryAfterSeconds} s`, undefined, {
          'Retry-After': String(decision.retryAfterSeconds),
        }),
        request,
        trace.requestId,
      )
    } else {
      try {
        const stillValid = async () => {
          const again = auth.authenticate(token, request)
          return (again instanceof Promise ? await again : again) !== null
        }
        answer = await serve(request, url, trace, { token, stillValid, holdOpen })
      } catch (thrown) {
        answer = errorAnswer(thrown, request, trace.requestId)
      }
    }
    if (decision && decision.counted !== false) addRateLimitHeaders(answer.headers, decision)
    return answer
  }

  async function answer(request: RequestView, client: ClientInfo = {}): Promise<Answer> {
    const started = performance.now()
    telemetry.requestStarted?.()
    const requestId = requestIdOf(request.headers.get('X-Request-Id'))
    const trace: Trace = { route: null, principal: null, requestId }
    let answer: Answer
    try {
      answer = await handle(request, client, trace)
    } catch (thrown) {
      answer = errorAnswer(thrown, request, requestId)
    }
    // CORS on every answer; a HEAD answer keeps GET's headers and drops the body.
    Object.assign(answer.headers, CORS_HEADERS)
    answer.headers['X-Request-Id'] = requestId
    if (request.method === 'HEAD') answer = withoutBody(answer)
    telemetry.requestFinished?.({
      requestId,
      method: request.method,
      route: trace.route,
      status: answer.status,
      bytes: bodyLength(answer),
      durationMs: performance.now() - started,
      principal: trace.principal,
    } satisfies RequestRecord)
    return answer
  }

  return {
    answer,
    fetch: async (request, client) => toResponse(await answer(request, client)),
    waiting: () => ({ longPolls: waits.counts()['long-poll'], streams: streams.size }),
    stopWaiting() {
      waits.close()
      streams.close()
    },
  }
}

/** What a request's endpoint may ask again of its key, and of its connection. */
interface KeyCheck {
  token: string | null
  stillValid: () => Promise<boolean>
  holdOpen: (() => void) | undefined
}

type Trace = RequestContext['trace'] & { principal: string | null; requestId: string }

const encoder = new TextEncoder()
// Node's and Bun's Buffer counts UTF-8 bytes without encoding them; elsewhere they are encoded.
const buffer = (globalThis as { Buffer?: { byteLength(text: string): number } }).Buffer
const byteLength = buffer ? (text: string) => buffer.byteLength(text) : (text: string) => encoder.encode(text).byteLength

function bodyLength({ body, headers }: Answer): number | null {
  if (typeof body === 'string') return byteLength(body)
  if (body instanceof Uint8Array) return body.byteLength
  if (body === null) return 0
  const declared = headers['Content-Length']
  return declared === undefined ? null : Number(declared)
}

/** The answer to a method other than GET, HEAD and OPTIONS on a path the registry serves. */
const readOnly = () => new HttpError('method_not_allowed', 'this service is read-only: use GET or HEAD', undefined, { Allow: ALLOWED_METHODS })

function bearerToken(request: RequestView): string | null {
  const header = request.headers.get('Authorization')
  const match = header === null ? null : /^Bearer[ ]+(\S+)\s*$/i.exec(header)
  return match?.[1] ?? null
}

/** IETF draft-ietf-httpapi-ratelimit-headers: one policy, named "default". */
function addRateLimitHeaders(headers: Record<string, string>, decision: RateLimitDecision): void {
  headers['RateLimit-Policy'] = `"default";q=${decision.limit};w=${decision.windowSeconds}`
  headers.RateLimit = `"default";r=${decision.remaining};t=${decision.resetSeconds}`
}
