import { JSON_API_MEDIA_TYPE } from './media-type.js'

const encoder = new TextEncoder()

export function jsonApiResponse(document: unknown, status = 200, headers: Record<string, string> = {}): Response {
  const body = encoder.encode(JSON.stringify(document))
  return new Response(body, {
    status,
    headers: { 'Content-Type': JSON_API_MEDIA_TYPE, 'Content-Length': String(body.byteLength), ...headers },
  })
}

/** Headers of a paged response: the RFC 8288 Link for generic clients, and the feed head. */
export function pagingHeaders(next: string | undefined, feedHead: string | null): Record<string, string> {
  return {
    ...(next === undefined ? {} : { Link: `<${next}>; rel="next"` }),
    ...(feedHead === null ? {} : { 'Change-Feed-Head': feedHead }),
  }
}
