/**
 * `entity-registry/bun`: serves a fetch handler with `Bun.serve`. Bun hands over Web `Request`s
 * already, so this only adds what every adapter adds (adapters/web.ts).
 */
import { toFetch, type HandlerSource, type WebAdapterOptions } from './web.js'

export type { FetchHandler, HandlerSource, WebAdapterOptions } from './web.js'

export interface BunServeOptions extends WebAdapterOptions {
  /** 0 picks a free port (default 8080). */
  port?: number
  /** Default 127.0.0.1. */
  hostname?: string
}

export interface RunningBunServer {
  /** `http://host:port` with the port actually bound. */
  url: string
  close(): Promise<void>
}

/** The part of Bun's server a request's handler uses. */
interface BunServer {
  requestIP(request: Request): { address: string } | null
  /** Seconds this request's connection may stay idle (0: no limit); Bun's default is 10 s. */
  timeout(request: Request, seconds: number): void
}

/** The part of Bun's global this adapter uses; typed here so that no Bun types are needed to compile. */
interface BunRuntime {
  serve(options: {
    port: number
    hostname: string
    fetch(request: Request, server: BunServer): Promise<Response>
    error(error: Error): Response
  }): { port: number; hostname: string; stop(closeActiveConnections?: boolean): Promise<void> | void }
}

/** Serves `handler` (or the promise of one) under Bun. */
export async function serve(handler: HandlerSource, { port = 8080, hostname = '127.0.0.1', ...options }: BunServeOptions = {}): Promise<RunningBunServer> {
  const bun = (globalThis as { Bun?: BunRuntime }).Bun
  if (bun === undefined) throw new Error('entity-registry/bun runs under Bun; on Node use entity-registry/node')
  const fetch = toFetch(handler, options)
  const server = bun.serve({
    port,
    hostname,
    fetch: (request, server) => {
      const address = server.requestIP(request)?.address
      // Bun closes a connection idle for 10 s: a long-poll, or an event stream between heartbeats.
      const holdOpen = () => server.timeout(request, 0)
      return fetch(request, address === undefined ? { holdOpen } : { address, holdOpen })
    },
    // toFetch answers every request itself; this is Bun's last resort, and must not print a stack.
    error: () => new Response(null, { status: 500 }),
  })
  const shownHost = server.hostname.includes(':') ? `[${server.hostname}]` : server.hostname
  return {
    url: `http://${shownHost}:${server.port}`,
    close: async () => {
      await server.stop(true)
    },
  }
}
