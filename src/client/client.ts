import { registryErrorOf, RegistryError } from './errors.js'
import { mirror, type MirrorOptions, type MirrorResult } from './mirror.js'
import { isRetryableStatus, retryDelayMs, sleep, type RetryOptions } from './retry.js'
import type { FacetField } from '../contract/fields.js'
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

export interface ListOptions {
  /** A GFFS filter of qualifiers, e.g. `type:person jurisdiction:US-WA`. */
  filter?: string
  /** Page size, 1 to 100 (the server's default is 100). */
  limit?: number
  /** Start after this cursor (a previous page's `cursor`). */
  after?: string | null
  signal?: AbortSignal
}

export interface ChangesOptions extends ListOptions {
  /**
   * `either`: a change matches when the entity's snapshot before or after it matches the filter, and
   * each change says in `meta.matchesFilter` whether the entity is in the subset afterwards.
   */
  filterScope?: 'after' | 'either'
}

export interface DownloadOptions {
  /** An inclusive byte range; the answer is then 206 with those bytes. */
  range?: { start: number; end?: number }
  signal?: AbortSignal
}

export interface Download {
  status: number
  /** The bytes, streamed. */
  body: ReadableStream<Uint8Array>
  headers: Headers
}

export interface RegistryClient {
  /** The entity, following merges (its `id` is then the surviving entity's). */
  get(id: string, options?: { signal?: AbortSignal }): Promise<EntityResource>
  /** Every matching entity in id order, page after page (`links.next` followed). */
  list(options?: ListOptions): AsyncIterable<EntityResource>
  listPages(options?: ListOptions): AsyncIterable<Page<EntityResource>>
  /** The feed's changes from `after` up to the head, then the iteration ends. */
  changes(options?: ChangesOptions): AsyncIterable<EntityChange>
  changePages(options?: ChangesOptions): AsyncIterable<Page<EntityChange>>
  /** Up to 100 entities ranked for `q` (GFFS: qualifiers filter, words and phrases rank). */
  search(q: string, options?: { signal?: AbortSignal }): Promise<EntityResource[]>
  /**
   * Facet counts (`/v1/facets`): the entities `filter` matches, and for each of `fields` (default all:
   * type, jurisdiction, localType, authority, status) its 50 most frequent values with their counts.
   */
  facets(options?: { filter?: string; fields?: readonly FacetField[]; signal?: AbortSignal }): Promise<FacetCounts>
  /** A rendition's bytes, by its `links.content` address. */
  download(contentUrl: string, options?: DownloadOptions): Promise<Download>
  /** Keeps a copy of a filtered subset: back-fill, then follow the feed; see `MirrorOptions`. */
  mirror(options: MirrorOptions): Promise<MirrorResult>
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
        const retryAfter = response.status === 429 ? response.headers.get('Retry-After') : null
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
        }),
        changesOptions.signal,
      ),
    changes: (changesOptions = {}) => items(client.changePages(changesOptions)),
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
