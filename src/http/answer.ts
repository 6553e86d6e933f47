/**
 * What the core reads of a request. A Web `Request` is one; the Node adapter passes a lighter view
 * of node:http's request, so that a request served on Node makes no `Request` or `Response` object.
 */
export interface RequestView {
  readonly method: string
  /** The absolute URL. */
  readonly url: string
  /** `url` parsed, where an adapter parsed it already (the Node adapter does, to check it): read, never changed. */
  readonly parsedUrl?: URL
  readonly headers: { get(name: string): string | null }
}

/** What an adapter knows of the connection a request came on. */
export interface ClientInfo {
  /** The client's IP address; behind a trusted proxy (`trustProxy`), the one the proxy saw. */
  address?: string
  /**
   * Lifts the adapter's idle timeouts for this request's connection, called when the request is to
   * wait (a long-poll) or to stream (server-sent events): its own heartbeats and bounds then apply.
   */
  holdOpen?: () => void
}

/** A response before it is a Web `Response`: `registry.answer` gives it, and the Node adapter writes it as it is. */
export interface Answer {
  status: number
  headers: Record<string, string>
  /**
   * A string is sent as UTF-8, and a `Content-Length` is added for it where the answer is sent;
   * bytes or a stream carry their own `Content-Length` header where their length is known.
   */
  body: string | Uint8Array | ReadableStream<Uint8Array> | DeferredBody | null
  /**
   * Called once the body has gone: written out to the connection (or the connection closed) where
   * the adapter can tell, as the Node adapter can, with `reusable` true: nothing reads the body's
   * bytes any more. When the answer becomes a Web `Response`, with false: the runtime may read them
   * still. A body read whole into a buffer (a rendition) gives the buffer back then, to be read into
   * again only when reusable.
   */
  sent?: (reusable: boolean) => void
}

/**
 * A streamed body made into a Web stream only when one is asked for: an adapter with a way of its own
 * to write it (the Node adapter writes the change feed's events to its response) never makes one. A
 * Web stream holds 2.3 KB of heap, which each of ten thousand open event streams would hold unread.
 */
export interface DeferredBody {
  /** The body as a Web stream: called once, by the adapter that reads it so. */
  readable(): ReadableStream<Uint8Array>
  /** The body will not be read (the answer to HEAD). */
  cancel(): void
}

export function isDeferredBody(body: Answer['body']): body is DeferredBody {
  return typeof (body as Partial<DeferredBody> | null)?.readable === 'function'
}

const encoder = new TextEncoder()

/** The answer as a Web `Response`, with the length of a text body. */
export function toResponse({ status, headers, body, sent }: Answer): Response {
  // The runtime sends it as it will: past here, no one can tell when its bytes have gone.
  sent?.(false)
  if (isDeferredBody(body)) return new Response(body.readable(), { status, headers })
  if (typeof body !== 'string') return new Response(body as BodyInit | null, { status, headers })
  const bytes = encoder.encode(body)
  return new Response(bytes, { status, headers: { ...headers, 'Content-Length': String(bytes.byteLength) } })
}

/** The answer to HEAD: GET's headers, the length of its body included, and no body. */
export function withoutBody(answer: Answer): Answer {
  const { body } = answer
  if (body === null) return answer
  answer.sent?.(true)
  if (body instanceof ReadableStream) void body.cancel()
  else if (isDeferredBody(body)) body.cancel()
  const headers = typeof body === 'string' ? { ...answer.headers, 'Content-Length': String(encoder.encode(body).byteLength) } : answer.headers
  return { status: answer.status, headers, body: null }
}
