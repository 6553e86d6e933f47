import { registryErrorOf, RegistryError } from './errors.js'
import { mirror } from './mirror.js'
import { watchChanges } from './watch-changes.js'
import { isRetryableStatus, retryDelayMs, sleep, type RetryOptions } from './retry.js'
import type { ListOptions, RegistryClient } from './registry-client.js'
import type { EntityChange, EntityResource, FacetCounts, Page } from './types.js'

export interface ClientOptions {
  /** Where the registry is mounted, e.g. `https://api.example.org/registry` (`/v1/...` follows it). */
  baseUrl: string
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string
  /** Another fetch (a proxy agent, a test double); default the global one. */
  fetch?: typeof globalThis.fetch
  retry?: RetryOptions
}

const JSON_API = 'application/vnd.api+json'

interface Document<T> {
  data: T
  links?: { next?: string }
  meta?: { cursor?: string | null }
}

/** A typed client of the registry over `fetch`: runs in Node, Bun, Deno and browsers. */
export function createClient(options: ClientOptions): RegistryClient {
  const base = options.baseUrl.replace(/\/+$/, '')
  const fetchFn = options.fetch ?? ((input, init) => globalThis.fetch(input, init))
  const retry: Required<RetryOptions> = { retries: 5, baseDelayMs: 250, maxDelayMs: 30_000, ...options.retry }

  /** One GET, retried on 429 (after Retry-After), 5xx and network errors; an error answer throws. */
  async function request(url: string, headers: Record<string, string>, signal?: AbortSignal): Promise<Response> {
    const allHeaders = options.apiKey === undefined ? headers : { ...headers, Authorization: `Bearer ${options.apiKey}` }
    for (let attempt = 0; ; attempt++) {
      let response: Response
      try {
        response = await fetchFn(url, { headers: allHeaders, ...(signal ? { signal } : {}) })
      } catch (error) {
        if (signal?.aborted || attempt >= retry.retries) throw error
        await sleep(retryDelayMs(attempt, null, retry), signal)
        continue
      }
      if (response.ok || response.status === 304) return response
      if (isRetryableStatus(response.status) && attempt < retry.retries) {
        // A 503 says when too: the store away, an instance with no room for another waiting request.
        const retryAfter = response.status === 429 || response.status === 503 ? response.headers.get('Retry-After') : null
        await response.body?.cancel()
        await sleep(retryDelayMs(attempt, retryAfter, retry), signal)
        continue
      }
      throw await registryErrorOf(response, url)
    }
  }

  async function document<T>(url: string, signal?: AbortSignal): Promise<{ document: Document<T>; response: Response }> {
    const response = await request(url, { Accept: JSON_API }, signal)
    return { document: (await response.json()) as Document<T>, response }
  }

  function address(path: string, parameters: Record<string, string | undefined>): string {
    const query = new URLSearchParams()
    for (const [name, value] of Object.entries(parameters)) if (value !== undefined) query.set(name, value)
    const text = query.toString()
    return `${base}${path}${text === '' ? '' : `?${text}`}`
  }

  async function* pages<T>(first: string, signal?: AbortSignal): AsyncGenerator<Page<T>> {
    for (let next: string | null = first; next !== null; ) {
      const { document: page, response }: { document: Document<T[]>; response: Response } = await document<T[]>(next, signal)
      next = page.links?.next ?? null
      yield { data: page.data, cursor: page.meta?.cursor ?? null, next, feedHead: response.headers.get('Change-Feed-Head') }
    }
  }

  async function* items<T>(source: AsyncIterable<Page<T>>): AsyncGenerator<T> {
    for await (const page of source) yield* page.data
  }

  const pageParameters = ({ filter, limit, after }: ListOptions) => ({
    filter,
    'page[after]': after ?? undefined,
    'page[limit]': limit === undefined ? undefined : String(limit),
  })

  const client: RegistryClient = {
    async get(id, { signal } = {}) {
      return (await document<EntityResource>(`${base}/v1/entities/${encodeURIComponent(id)}`, signal)).document.data
    },
    listPages: (listOptions = {}) => pages<EntityResource>(address('/v1/entities', pageParameters(listOptions)), listOptions.signal),
    list: (listOptions = {}) => items(client.listPages(listOptions)),
    changePages: (changesOptions = {}) =>
      pages<EntityChange>(
        address('/v1/entities/changes', {
          // The feed needs a filter: `-type:""` matches every change.
          ...pageParameters({ ...changesOptions, filter: changesOptions.filter ?? '-type:""' }),
          filterScope: changesOptions.filterScope,
          waitSeconds: changesOptions.waitSeconds === undefined ? undefined : String(changesOptions.waitSeconds),
        }),
        changesOptions.signal,
      ),
    changes: (changesOptions = {}) => items(client.changePages(changesOptions)),
    watchChanges: (watchOptions = {}) =>
      watchChanges(
        request,
        // The position goes in Last-Event-ID, which the server reads before page[after].
        address('/v1/entities/changes', { filter: watchOptions.filter ?? '-type:""', filterScope: watchOptions.filterScope }),
        watchOptions,
      ),
    async search(q, { signal } = {}) {
      return (await document<EntityResource[]>(address('/v1/search', { q }), signal)).document.data
    },
    async facets({ filter, fields, signal } = {}) {
      const url = address('/v1/facets', { filter, fields: fields?.join(',') })
      const response = await request(url, { Accept: JSON_API }, signal)
      return ((await response.json()) as { meta: FacetCounts }).meta
    },
    async download(contentUrl, { range, signal } = {}) {
      const headers: Record<string, string> = range ? { Range: `bytes=${range.start}-${range.end ?? ''}` } : {}
      const response = await request(contentUrl, headers, signal)
      if (response.body === null) throw new RegistryError(response.status, [{ title: 'the answer has no body' }], contentUrl)
      return { status: response.status, body: response.body, headers: response.headers }
    },
    mirror: (mirrorOptions) => mirror(client, mirrorOptions),
  }
  return client
}
