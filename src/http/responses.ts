import type { ResourceTemplate } from '../contract/resource-template.js'
import type { Answer } from './answer.js'
import { documentBody } from './documents.js'
import type { Links } from './links.js'
import { JSON_API_MEDIA_TYPE } from './media-type.js'

/** A JSON:API document, given as JSON text or its UTF-8 bytes (whose length is then given here). */
export function jsonApiAnswer(json: string | Uint8Array, status = 200, headers?: Record<string, string>): Answer {
  const all: Record<string, string> = { 'Content-Type': JSON_API_MEDIA_TYPE, ...headers }
  if (typeof json !== 'string') all['Content-Length'] = String(json.byteLength)
  return { status, headers: all, body: json }
}

export interface Page {
  /** Where the page was asked for: `/v1/entities` or `/v1/entities/changes`. */
  path: string
  /** The parameters carried into `links.next` as the client wrote them (the filter, its scope). */
  carried: [string, string][]
  /** The resources of the page: templates, or their UTF-8 bytes joined (comma-separated). */
  data: readonly ResourceTemplate[] | Uint8Array
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
export function pagedAnswer(url: URL, links: Links, page: Page): Answer {
  const next =
    page.hasMore && page.cursor !== null
      ? links.withQuery(page.path, [
          ...page.carried,
          ['page[after]', page.cursor],
          ['page[limit]', String(page.limit)],
        ])
      : undefined
  const self = JSON.stringify(links.withQuery(page.path, url.searchParams))
  const json = documentBody(
    `{"links":{"self":${self}${next === undefined ? '' : `,"next":${JSON.stringify(next)}`}},"data":[`,
    page.data,
    `],"meta":{"cursor":${JSON.stringify(page.cursor)}}}`,
    links,
  )
  return jsonApiAnswer(json, 200, {
    ...(next === undefined ? {} : { Link: `<${next}>; rel="next"` }),
    ...(page.feedHead === null ? {} : { 'Change-Feed-Head': page.feedHead }),
  })
}
