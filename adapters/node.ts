import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'

/** Anything with a Web-standard fetch handler, such as a registry. */
export interface FetchHandler {
  fetch(request: Request): Promise<Response>
}

export interface NodeHandlerOptions {
  /** Take the public protocol and host from X-Forwarded-Proto / X-Forwarded-Host (behind a proxy you trust). */
  trustProxy?: boolean
}

/** Bodies up to this size are written in one `res.end`; larger ones are streamed. */
const ONE_CHUNK_LIMIT = 64 * 1024

/**
 * A node:http request listener over a fetch handler. Lean on purpose: the URL is built as a string
 * and headers are passed as raw pairs (DESIGN section 10 measured 42 us a request against 86 us for
 * a general adapter). Only GET-like requests reach this service, so request bodies are not read.
 */
export function toNodeListener(handler: FetchHandler, options: NodeHandlerOptions = {}) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    handler
      .fetch(toRequest(req, options))
      .then((response) => writeResponse(response, res))
      .catch(() => {
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'application/vnd.api+json' })
        res.end(res.headersSent ? undefined : '{"errors":[{"status":"500","code":"internal_error","title":"Internal server error"}]}')
      })
  }
}

function toRequest(req: IncomingMessage, { trustProxy }: NodeHandlerOptions): Request {
  const forwarded = (name: string) => (trustProxy ? firstValue(req.headers[name]) : undefined)
  const protocol = forwarded('x-forwarded-proto') ?? ('encrypted' in req.socket && req.socket.encrypted ? 'https' : 'http')
  const host = forwarded('x-forwarded-host') ?? req.headers.host ?? 'localhost'
  const headers = new Headers()
  const raw = req.rawHeaders
  for (let index = 0; index < raw.length; index += 2) {
    // HTTP/2 pseudo-headers (":path") are not valid header names for a Request.
    if (raw[index]!.startsWith(':')) continue
    headers.append(raw[index]!, raw[index + 1]!)
  }
  return new Request(`${protocol}://${host}${req.url ?? '/'}`, { method: req.method ?? 'GET', headers })
}

function firstValue(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header
  return value?.split(',')[0]?.trim() || undefined
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
  // pipeline destroys the source when the client goes away, which cancels the Web stream.
  await pipeline(Readable.fromWeb(response.body as import('node:stream/web').ReadableStream), res).catch(() => undefined)
}

export interface ServeOptions extends NodeHandlerOptions {
  port?: number
  host?: string
}

export interface RunningServer {
  server: Server
  /** `http://host:port` with the port actually bound. */
  url: string
  close(): Promise<void>
}

/** Serves a fetch handler on node:http; port 0 picks a free port. */
export function serve(handler: FetchHandler, { port = 8080, host = '127.0.0.1', ...options }: ServeOptions = {}): Promise<RunningServer> {
  const server = createServer(toNodeListener(handler, options))
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      const address = server.address() as AddressInfo
      const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address
      resolve({
        server,
        url: `http://${shownHost}:${address.port}`,
        close: () =>
          new Promise<void>((done, fail) => {
            server.close((error) => (error ? fail(error) : done()))
            server.closeAllConnections()
          }),
      })
    })
  })
}
