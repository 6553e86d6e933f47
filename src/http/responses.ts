import type { Links } from './links.js'
import { JSON_API_MEDIA_TYPE } from './media-type.js'

const encoder = new TextEncoder()

export function jsonApiResponse(document: unknown, status = 200, headers: Record<string, string> = {}): Response {
  const body = encoder.encode(JSON.stringify(document))
  return new Response(body, {
    status,
    headers: { 'Content-Type': JSON_API_MEDIA_TYPE, 'Content-Length': String(body.byteLength), ...headers },
  })
}

export interface Page {
  /** Where the page was asked for: `/v1/entities` or `/v1/entities/changes`. */
  path: string
  /** The parameters carried into `links.next` as the client wrote them (the filter, its scope). */
  carried: [string, string][]
  data: unknown[]
  /** The page's `meta.cursor`: where the next page starts. */
  cursor: string | null
  hasMore: boolean
  limit: number
  feedHead: string | null
}

/**
 * A paged collection: `links.self`, `links.next` (the opaque address of the next page, also sent as
 * an RFC 8288 Link header for generic clients), `meta.cursor`, and the feed head.
 */
export function pagedResponse(url: URL, links: Links, page: Page): Response {
  const next =
    page.hasMore && page.cursor !== null
      ? links.withQuery(page.path, [
          ...page.carried,
          ['page[after]', page.cursor],
          ['page[limit]', String(page.limit)],
        ])
      : undefined
  const document = {
    links: { self: links.withQuery(page.path, url.searchParams), ...(next ? { next } : {}) },
    data: page.data,
    meta: { cursor: page.cursor },
  }
  return jsonApiResponse(document, 200, {
    ...(next === undefined ? {} : { Link: `<${next}>; rel="next"` }),
    ...(page.feedHead === null ? {} : { 'Change-Feed-Head': page.feedHead }),
  })
}
