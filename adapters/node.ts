import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { isNodeBacked, NODE_READABLE } from '../src/blobs/node-backed-stream.js'
import { isDeferredBody, type Answer, type ClientInfo, type DeferredBody, type RequestView } from '../src/http/answer.js'
import { EVENT_SINK, isEventStream, type EventSink, type EventStream, type EventWriting } from '../src/http/change-events.js'
import {
  errorBody,
  FORBIDDEN_METHODS,
  firstValue,
  forwardedClient,
  forwardedProtocol,
  internalError,
  methodNotAllowed,
  RequestRefusal,
  TITLES,
  type FetchHandler,
} from './refusal.js'

export type { FetchHandler } from './refusal.js'

export interface NodeHandlerOptions {
  /**
   * Take the public protocol and host from X-Forwarded-Proto / X-Forwarded-Host, and the client's
   * address from X-Forwarded-For (behind a proxy you trust).
   */
  trustProxy?: boolean
  /**
   * A response whose client has read nothing for this long is closed (default 60000 ms; 0 never):
   * a client that stopped reading must not hold a download, and its buffers, for ever. It counts from
   * the last bytes the connection took; idle keep-alive connections keep node:http's own timeout.
   */
  sendTimeoutMs?: number
}

const DEFAULT_SEND_TIMEOUT_MS = 60_000

/** Bodies up to this size are written in one `res.end`; larger ones are streamed. */
const ONE_CHUNK_LIMIT = 64 * 1024

/** A handler that can answer without Web objects, as a registry does (`registry.answer`). */
export interface AnsweringHandler extends FetchHandler {
  answer(request: RequestView, client?: ClientInfo): Promise<Answer>
}

/**
 * A node:http request listener over a fetch handler. Lean on purpose: a registry's `answer` is
 * served with no Web `Request` or `Response` (on Node they cost more than the registry's own work
 * for a small answer); any other handler gets a `Request` built from the URL string and raw header
 * pairs. Only GET-like requests reach this service, so request bodies are not read. A request that
 * cannot become a Web `Request` (a method Fetch forbids, a malformed Host) is answered here with a
 * JSON:API error, never thrown: one bad request must not end the process.
 */
export function toNodeListener(handler: FetchHandler | AnsweringHandler, options: NodeHandlerOptions = {}) {
  const respond =
    'answer' in handler && typeof handler.answer === 'function'
      ? (req: IncomingMessage, res: ServerResponse) => handler.answer(toRequestView(req, options), clientOf(req, options)).then((answer) => writeAnswer(answer, res))
      : (req: IncomingMessage, res: ServerResponse) => handler.fetch(toRequest(req, options), clientOf(req, options)).then((response) => writeResponse(response, res))
  const sendTimeoutMs = options.sendTimeoutMs ?? DEFAULT_SEND_TIMEOUT_MS
  return (req: IncomingMessage, res: ServerResponse): void => {
    // The socket's inactivity timeout, for this response: no bytes taken by the connection for that
    // long. node:http sets its keep-alive timeout once the response is sent. A server whose own
    // `timeout` it is (as `serve` makes it) has armed it for this request already: node:http then
    // destroys the socket as this would, and a request saves the timer and listener set here.
    if (sendTimeoutMs > 0 && req.socket.timeout !== sendTimeoutMs) res.setTimeout(sendTimeoutMs, () => res.destroy())
    let responded: Promise<void>
    try {
      responded = respond(req, res)
    } catch (error) {
      const refusal = error instanceof RequestRefusal ? error : new RequestRefusal(400, 'bad_request', 'the request cannot be read')
      writeError(res, refusal.status, refusal.code, refusal.message, refusal.headers)
      return
    }
    responded.catch(() => {
      const error = internalError()
      writeError(res, error.status, error.code, error.message)
    })
  }
}

/** The method and absolute URL of a request, checked as a Web `Request` would need them. */
function methodAndUrl(req: IncomingMessage, { trustProxy }: NodeHandlerOptions): { method: string; url: URL } {
  const method = req.method ?? 'GET'
  if (FORBIDDEN_METHODS.has(method.toUpperCase())) throw methodNotAllowed()
  const forwarded = (name: string) => (trustProxy ? req.headers[name] : undefined)
  const protocol = forwardedProtocol(forwarded('x-forwarded-proto')) ?? ('encrypted' in req.socket && req.socket.encrypted ? 'https' : 'http')
  const host = firstValue(forwarded('x-forwarded-host')) ?? req.headers.host ?? (req.httpVersion === '1.1' ? undefined : 'localhost')
  if (host === undefined) throw new RequestRefusal(400, 'bad_request', 'an HTTP/1.1 request needs a Host header')
  const target = req.url ?? '/'
  try {
    // Only an origin-form target ("/path?query") is served; the host must make a valid URL with it.
    if (!target.startsWith('/')) throw new TypeError('not origin-form')
    return { method, url: new URL(`${protocol}://${host}${target}`) }
  } catch {
    throw new RequestRefusal(400, 'bad_request', `the ${trustProxy && req.headers['x-forwarded-host'] ? 'X-Forwarded-Host' : 'Host'} header and the request target do not form a valid URL`)
  }
}

function clientOf(req: IncomingMessage, { trustProxy }: NodeHandlerOptions): ClientInfo {
  const address = (trustProxy ? forwardedClient(req.headers['x-forwarded-for']) : undefined) ?? req.socket.remoteAddress
  // A long-poll or an event stream: the send timeout would cut a wait, or a stream between its
  // heartbeats. node:http arms it again for the connection's next request.
  const holdOpen = () => req.socket.setTimeout(0)
  return address === undefined ? { holdOpen } : { address, holdOpen }
}

/** HTTP/2 pseudo-headers (":path") are not header names a `Request` has. */
const isPseudoHeader = (name: string) => name.startsWith(':')

function toRequest(req: IncomingMessage, options: NodeHandlerOptions): Request {
  const { method, url } = methodAndUrl(req, options)
  const headers = new Headers()
  const raw = req.rawHeaders
  for (let index = 0; index < raw.length; index += 2) {
    if (!isPseudoHeader(raw[index]!)) headers.append(raw[index]!, raw[index + 1]!)
  }
  return new Request(url.href, { method, headers })
}

/**
 * The request as the registry reads it. `headers.get` answers as `Headers.get` does: every field of
 * the name, case-insensitively, joined with ", " (node:http's `req.headers` keeps only the first of
 * some, such as Authorization).
 */
function toRequestView(req: IncomingMessage, options: NodeHandlerOptions): RequestView {
  const { method, url } = methodAndUrl(req, options)
  const raw = req.rawHeaders
  return {
    method,
    url: url.href,
    parsedUrl: url,
    headers: {
      get(name: string): string | null {
        const wanted = name.toLowerCase()
        let value: string | null = null
        for (let index = 0; index < raw.length; index += 2) {
          if (raw[index]!.length !== wanted.length || raw[index]!.toLowerCase() !== wanted || isPseudoHeader(raw[index]!)) continue
          value = value === null ? raw[index + 1]! : `${value}, ${raw[index + 1]!}`
        }
        return value
      },
    },
  }
}

/** A JSON:API error document; after the headers went out, all that is left is to end the response. */
function writeError(res: ServerResponse, status: number, code: string, detail: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy()
    return
  }
  const body = errorBody(status, code, detail)
  res.writeHead(status, { ...headers, 'Content-Type': 'application/vnd.api+json', 'Content-Length': Buffer.byteLength(body) })
  res.end(body)
}

/** Sockets already given their error answer: the parser reports the same error again for later bytes. */
const answered = new WeakSet<Duplex>()

/**
 * node:http's own answer to a request it could not parse (malformed request line or headers, headers
 * too large), with a JSON:API body where the socket can still be written to.
 */
export function answerClientError(error: Error & { code?: string }, socket: Duplex): void {
  if (answered.has(socket)) return
  answered.add(socket)
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy()
    return
  }
  const answer = () => {
    if (!socket.writable) socket.destroy()
    else if (error.code === 'HPE_HEADER_OVERFLOW') writeRawError(socket, 431, 'request_header_fields_too_large', 'the request headers are too large')
    else if (error.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') writeRawError(socket, 413, 'content_too_large', 'the chunk extensions are too large')
    else if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') writeRawError(socket, 408, 'request_timeout', 'the request took too long to arrive')
    else writeRawError(socket, 400, 'bad_request', 'the request is not valid HTTP')
  }
  afterAnswersUnderWay(socket, answer)
}

/**
 * Earlier requests on the connection (pipelined, or the one whose body is malformed) are answered
 * first: an error written now would read as their answer, or land inside a body being streamed.
 * `_httpMessage` is the response node:http has writing to the socket (its own default handler reads it).
 */
function afterAnswersUnderWay(socket: Duplex, then: () => void): void {
  const underWay = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage
  if (underWay) underWay.once('finish', () => afterAnswersUnderWay(socket, then))
  else then()
}

/** node:http hands CONNECT to its own event, not to the request listener: refuse it the same way. */
export function answerConnect(_request: IncomingMessage, socket: Duplex): void {
  const refusal = methodNotAllowed()
  writeRawError(socket, refusal.status, refusal.code, refusal.message, refusal.headers)
}

function writeRawError(socket: Duplex, status: number, code: string, detail: string, headers: Record<string, string> = {}): void {
  const body = errorBody(status, code, detail)
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('')
  socket.end(
    `HTTP/1.1 ${status} ${TITLES[status]}\r\n${extra}Content-Type: application/vnd.api+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  )
}

function writeAnswer({ status, headers, body, sent }: Answer, res: ServerResponse): Promise<void> | void {
  // Once the last bytes are handed to the socket, or the connection is gone: the body's bytes are
  // read no more (node:http keeps no reference past 'close').
  if (sent) res.once('close', () => sent(true))
  if (typeof body === 'string') {
    res.writeHead(status, headerList(headers, Buffer.byteLength(body))).end(body)
  } else if (body === null || body instanceof Uint8Array) {
    res.writeHead(status, headerList(headers)).end(body ?? undefined)
  } else {
    res.writeHead(status, headerList(headers))
    flattenHead(res)
    return streamBody(body, res)
  }
}

/** Where flattenHead puts what it reads, so that no compiler drops the read as unused. */
let headFirstCode = 0

/**
 * node:http keeps a response's head as the string it writes (`_header`) until the response ends,
 * joined field by field: V8 holds such a join as a rope of some forty strings (1.5 KB). A streamed
 * body may last hours (an event stream, ten thousand of them): reading a character of the head makes
 * V8 flatten it in place, to its own length (bench/README.md, the live feed).
 */
function flattenHead(res: ServerResponse): void {
  const head = (res as { _header?: unknown })._header
  if (typeof head === 'string') headFirstCode = head.charCodeAt(0)
}

/**
 * An answer's headers as node:http's flat list of names and values, `Content-Length` replaced when
 * given. node:http renders an object's headers through a `for…in` over it, which cost a get by id
 * some 7 us more over HTTP than this list (bench/README.md); both are validated alike.
 */
function headerList(headers: Record<string, string>, contentLength?: number): string[] {
  const list: string[] = []
  for (const name of Object.keys(headers)) {
    if (contentLength === undefined || name !== 'Content-Length') list.push(name, headers[name]!)
  }
  if (contentLength !== undefined) list.push('Content-Length', String(contentLength))
  return list
}

async function writeResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string | string[]> = {}
  response.headers.forEach((value, name) => {
    headers[name] = value
  })
  const setCookies = response.headers.getSetCookie()
  if (setCookies.length > 0) headers['set-cookie'] = setCookies
  res.writeHead(response.status, headers)
  if (response.body === null) {
    res.end()
    return
  }
  const length = Number(response.headers.get('content-length') ?? Number.NaN)
  if (length <= ONE_CHUNK_LIMIT) {
    res.end(new Uint8Array(await response.arrayBuffer()))
    return
  }
  await streamBody(response.body, res)
}

/**
 * A Node stream behind the body is piped as it is: pipeline destroys it when the client goes away.
 * A Web stream is read chunk by chunk into the response, waiting for 'drain' when the connection's
 * buffer is full, and cancelled when the client goes: `Readable.fromWeb` and a pipeline over it held
 * some 10 KB a response more, which ten thousand open event streams of the change feed would hold.
 */
function streamBody(body: ReadableStream<Uint8Array> | DeferredBody, res: ServerResponse): Promise<void> | void {
  if (isEventStream(body)) return writeEvents(body, res)
  if (isDeferredBody(body)) return pump(body.readable().getReader(), res)
  if (isNodeBacked(body)) return pipeline(body[NODE_READABLE](), res).catch(() => undefined)
  return pump(body.getReader(), res)
}

/** The change feed's events written to the response as they come, the stream's steps paused while the connection's buffer is full. */
function writeEvents(body: EventStream, res: ServerResponse): void {
  const writing = body[EVENT_SINK](new ResponseSink(res))
  ;(res as ResponseWithEvents)[EVENT_WRITING] = writing
  // Listeners of the module, not closures: a stream may last hours, and ten thousand may be open.
  // `on`, not `once`: a response closes once, and `once` keeps a wrapper and a bound function a stream.
  res.on('drain', resumeEvents).on('close', cancelEvents)
}

const EVENT_WRITING = Symbol('eventWriting')
type ResponseWithEvents = ServerResponse & { [EVENT_WRITING]: EventWriting }

function resumeEvents(this: ServerResponse): void {
  ;(this as ResponseWithEvents)[EVENT_WRITING].resume()
}

function cancelEvents(this: ServerResponse): void {
  ;(this as ResponseWithEvents)[EVENT_WRITING].cancel()
}

/** An event stream's sink: the response. */
class ResponseSink implements EventSink {
  constructor(private readonly res: ServerResponse) {}
  write(bytes: Uint8Array): void {
    this.res.write(bytes)
  }
  full(): boolean {
    return this.res.writableNeedDrain
  }
  end(): void {
    this.res.end()
  }
}

async function pump(reader: ReadableStreamDefaultReader<Uint8Array>, res: ServerResponse): Promise<void> {
  const gone = () => void reader.cancel().catch(() => {})
  res.once('close', gone)
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      if (res.destroyed) return
      if (!res.write(value) && res.writableNeedDrain) await drainedOrClosed(res)
    }
    res.end()
  } catch {
    // The body failed: the client sees the connection end before the response did.
    res.destroy()
  } finally {
    res.off('close', gone)
  }
}

/**
 * Until the response drains or closes, whichever comes first, with neither listener left behind: a
 * long download waits for a drain hundreds of times, and each wait left a 'close' listener on the
 * response until it ended (Node warned of a leak past ten).
 */
function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done).off('close', done)
      resolve()
    }
    res.once('drain', done).once('close', done)
  })
}

export interface ServeOptions extends NodeHandlerOptions {
  port?: number
  host?: string
}

export interface RunningServer {
  server: Server
  /** `http://host:port` with the port actually bound. */
  url: string
  /**
   * Stops accepting connections and closes the idle ones at once; requests in flight have `graceMs`
   * (default 0) to finish, their connections closing as they do, then every connection is closed.
   */
  close(graceMs?: number): Promise<void>
}

/** Serves a fetch handler on node:http; port 0 picks a free port. */
export function serve(handler: FetchHandler | AnsweringHandler, { port = 8080, host = '127.0.0.1', ...options }: ServeOptions = {}): Promise<RunningServer> {
  // A missing Host is refused by the listener, with an error document instead of node:http's empty 400.
  const server = createServer({ requireHostHeader: false }, toNodeListener(handler, options))
  // node:http arms it on each request's socket, and sets its keep-alive timeout once the answer is sent.
  server.timeout = options.sendTimeoutMs ?? DEFAULT_SEND_TIMEOUT_MS
  server.on('clientError', answerClientError)
  server.on('connect', answerConnect)
  // The connections open, each with its answer being written; once closing, each connection ends with
  // its answer rather than wait for another request. A Set of connections, not of answers: answers
  // entering and leaving a Set, one each a request, made V8's young-generation collections three
  // times as long (the answers outlived them; bench/README.md).
  const connections = new Set<Socket>()
  const answering = new WeakMap<Socket, ServerResponse>()
  let closing = false
  const endAfter = (response: ServerResponse) => {
    response.shouldKeepAlive = false
    response.once('finish', () => setImmediate(() => server.closeIdleConnections()))
  }
  // One listener for every connection (a socket closes once): a closure and a `once` wrapper a
  // connection each stayed as long as it, ten thousand waiting long-polls' worth.
  function forget(this: Socket) {
    connections.delete(this)
  }
  server.on('connection', (socket: Socket) => {
    connections.add(socket)
    socket.on('close', forget)
  })
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (closing) endAfter(response)
    else answering.set(request.socket, response)
  })
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      const address = server.address() as AddressInfo
      const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address
      resolve({
        server,
        url: `http://${shownHost}:${address.port}`,
        close: (graceMs = 0) =>
          new Promise<void>((done, fail) => {
            closing = true
            for (const socket of connections) {
              const response = answering.get(socket)
              if (response !== undefined && !response.writableFinished) endAfter(response)
            }
            const timer = setTimeout(() => server.closeAllConnections(), graceMs)
            server.close((error) => {
              clearTimeout(timer)
              if (error) fail(error)
              else done()
            })
            server.closeIdleConnections()
          }),
      })
    })
  })
}
