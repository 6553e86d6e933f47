/**
 * `entity-registry/deno`: serves a fetch handler with `Deno.serve`. Deno hands over Web `Request`s
 * already, so this only adds what every adapter adds (adapters/web.ts).
 */
import { toFetch, type HandlerSource, type WebAdapterOptions } from './web.js'

export type { FetchHandler, HandlerSource, WebAdapterOptions } from './web.js'

export interface DenoServeOptions extends WebAdapterOptions {
  /** 0 picks a free port (default 8080). */
  port?: number
  /** Default 127.0.0.1. */
  hostname?: string
}

export interface RunningDenoServer {
  /** `http://host:port` with the port actually bound. */
  url: string
  close(): Promise<void>
}

/** The part of Deno's global this adapter uses; typed here so that no Deno types are needed to compile. */
interface DenoRuntime {
  serve(
    options: {
      port: number
      hostname: string
      onListen(address: { hostname: string; port: number }): void
      onError(error: unknown): Response
    },
    handler: (request: Request, info: { remoteAddr: { hostname?: string } }) => Promise<Response>,
  ): { shutdown(): Promise<void> }
}

/** Serves `handler` (or the promise of one) under Deno. */
export function serve(handler: HandlerSource, { port = 8080, hostname = '127.0.0.1', ...options }: DenoServeOptions = {}): Promise<RunningDenoServer> {
  const deno = (globalThis as { Deno?: DenoRuntime }).Deno
  if (deno === undefined) return Promise.reject(new Error('entity-registry/deno runs under Deno; on Node use entity-registry/node'))
  const fetch = toFetch(handler, options)
  return new Promise((resolve) => {
    const server = deno.serve(
      {
        port,
        hostname,
        // Deno prints "Listening on ..." unless onListen is given: the caller prints its own line.
        onListen: (address) => {
          const shownHost = address.hostname.includes(':') ? `[${address.hostname}]` : address.hostname
          resolve({ url: `http://${shownHost}:${address.port}`, close: () => server.shutdown() })
        },
        // toFetch answers every request itself; this is Deno's last resort, and must not print a stack.
        onError: () => new Response(null, { status: 500 }),
      },
      (request, info) => fetch(request, info.remoteAddr.hostname === undefined ? {} : { address: info.remoteAddr.hostname }),
    )
  })
}
