import { registryErrorOf } from '../../client/errors.js'

const JSON_API = 'application/vnd.api+json'

export interface ApiDocument<T> {
  data?: T
  links?: { self?: string; next?: string }
  meta?: Record<string, unknown> & { cursor?: string | null }
}

/** One answered request: the address it went to (shown beside the view), its document and headers. */
export interface ApiAnswer<T> {
  url: string
  document: ApiDocument<T>
  headers: Headers
}

export type Parameters = Record<string, string | null | undefined>

/**
 * The page's only way to the API: every request carries the key, and every view shows the exact
 * address it fetched. Error answers throw the client's RegistryError (status, JSON:API errors).
 */
export interface Api {
  /** An address under the API's base path, on this page's origin. */
  address(path: string, parameters?: Parameters): string
  get<T>(address: string, signal?: AbortSignal): Promise<ApiAnswer<T>>
  /** A rendition (`links.content`): its bytes (GET) or only its headers (HEAD), with the key. */
  fetchBytes(address: string, init?: { method?: 'GET' | 'HEAD'; signal?: AbortSignal }): Promise<Response>
  /**
   * The change feed's server-sent events from after `lastEventId`: fetched, with the key (an
   * EventSource sends no Authorization header), to be read as it comes.
   */
  stream(address: string, lastEventId: string | null, signal: AbortSignal): Promise<Response>
}

export function createApi(basePath: string, key: string): Api {
  const authorization = `Bearer ${key}`
  const send = async (address: string, init: { method?: string; headers?: Record<string, string>; signal?: AbortSignal }) => {
    const response = await fetch(sameOrigin(address), { ...init, headers: { ...init.headers, Authorization: authorization } })
    if (!response.ok) throw await registryErrorOf(response, address)
    return response
  }
  return {
    address(path, parameters = {}) {
      const query = new URLSearchParams()
      for (const [name, value] of Object.entries(parameters)) if (value !== undefined && value !== null) query.set(name, value)
      const text = query.toString()
      return `${location.origin}${basePath}${path}${text === '' ? '' : `?${text}`}`
    },
    async get<T>(address: string, signal?: AbortSignal) {
      const response = await send(address, { headers: { Accept: JSON_API }, ...(signal ? { signal } : {}) })
      return { url: address, document: (await response.json()) as ApiDocument<T>, headers: response.headers }
    },
    fetchBytes: (address, init = {}) => send(address, init),
    stream: (address, lastEventId, signal) =>
      send(address, { headers: { Accept: 'text/event-stream', ...(lastEventId === null ? {} : { 'Last-Event-ID': lastEventId }) }, signal }),
  }
}

/**
 * The API's links are absolute, on its configured public address; the page may connect only to its
 * own origin (`connect-src 'self'`), where the same path answers.
 */
export function sameOrigin(address: string): string {
  const url = new URL(address, location.href)
  return `${location.origin}${url.pathname}${url.search}`
}
