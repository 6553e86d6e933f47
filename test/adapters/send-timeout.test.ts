/**
 * The Node adapter's send timeout: a response whose client reads nothing for `sendTimeoutMs` is
 * closed, whether its body is bytes sent at once or a stream; a client that reads slowly is not cut,
 * and an idle keep-alive connection keeps node:http's shorter keep-alive timeout.
 */
import { connect, type Socket } from 'node:net'
import { afterEach, expect, it } from 'vitest'
import { serve, type RunningServer } from '../../adapters/node.js'
import type { Answer } from '../../src/http/answer.js'

const MB = 1024 * 1024
const BYTES = new Uint8Array(32 * MB)
let running: RunningServer | undefined
const sockets: Socket[] = []
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy()
  await running?.close()
  running = undefined
})

/** 32 MiB, as bytes (`/bytes`) or as a stream made as it is read (`/stream`). */
function answer({ url }: { url: string }): Promise<Answer> {
  const headers = { 'Content-Type': 'application/octet-stream', 'Content-Length': String(BYTES.length) }
  if (new URL(url).pathname === '/bytes') return Promise.resolve({ status: 200, headers, body: BYTES })
  let sent = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent === BYTES.length) return controller.close()
      controller.enqueue(BYTES.subarray(sent, (sent += 64 * 1024)))
    },
  })
  return Promise.resolve({ status: 200, headers, body })
}
const handler = { answer, fetch: () => Promise.reject(new Error('unused')) }

/**
 * A raw client that sends a GET and reads nothing, and the server's side of its connection: `closed`
 * resolves with the milliseconds from the request until the server closed it.
 */
async function stalledClient(path: string): Promise<{ socket: Socket; closed: Promise<number> }> {
  const accepted = new Promise<Socket>((resolve) => running!.server.once('connection', resolve))
  const socket = connect(Number(new URL(running!.url).port), '127.0.0.1')
  sockets.push(socket)
  socket.pause()
  socket.on('error', () => undefined)
  const started = Date.now()
  socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`)
  const served = await accepted
  return { socket, closed: new Promise((resolve) => served.once('close', () => resolve(Date.now() - started))) }
}

const within = <T>(ms: number, promise: Promise<T>) => Promise.race([promise, new Promise<'open'>((resolve) => setTimeout(() => resolve('open'), ms))])

it.each(['/bytes', '/stream'])('closes a response to a client that reads nothing (%s)', async (path) => {
  running = await serve(handler, { port: 0, sendTimeoutMs: 1000 })
  const { closed } = await stalledClient(path)
  const after = await within(6000, closed)
  expect(after).toBeGreaterThanOrEqual(900)
  // Filling the kernel's buffers comes first: 2.6 s on a loaded 2-core machine.
  expect(after).toBeLessThan(4000)
})

it('does not close a response to a client that reads slowly', async () => {
  running = await serve(handler, { port: 0, sendTimeoutMs: 2000 })
  const { socket, closed } = await stalledClient('/stream')
  let received = 0
  socket.on('data', (chunk: Buffer) => {
    received += chunk.length
    socket.pause()
    // A few MiB a second: far below what the server could send. The connection's buffers (MiBs on
    // loopback) must drain before the server writes again, so a slower reader would leave the
    // server's side silent for longer than the timeout (the timeout sees what the connection takes).
    setTimeout(() => socket.resume(), 20)
  })
  socket.resume()
  expect(await within(5000, closed)).toBe('open')
  expect(received).toBeGreaterThan(0)
  expect(received).toBeLessThan(BYTES.length)
})

it('keeps the keep-alive timeout for an idle connection', async () => {
  running = await serve(handler, { port: 0, sendTimeoutMs: 30_000 })
  running.server.keepAliveTimeout = 500
  const { socket, closed } = await stalledClient('/bytes')
  let received = 0
  socket.on('data', (chunk: Buffer) => void (received += chunk.length)).resume()
  // Closed by the keep-alive timeout (0.5 s after the answer is read, however slowly a busy machine
  // reads 32 MiB), long before the send timeout (30 s) would.
  const after = await within(20_000, closed)
  expect(received).toBeGreaterThan(BYTES.length)
  expect(after).toBeLessThan(15_000)
})

it("tells an answer once its bytes have gone: not while a client that stopped reading holds them, at once when it leaves", async () => {
  let sent = 0
  const counting = { answer: async (request: { url: string }) => ({ ...(await answer(request)), sent: () => void sent++ }), fetch: handler.fetch }
  running = await serve(counting, { port: 0, sendTimeoutMs: 0 })
  expect((await (await fetch(`${running.url}/bytes`)).arrayBuffer()).byteLength).toBe(BYTES.length)
  await new Promise((resolve) => setTimeout(resolve, 50))
  expect(sent).toBe(1)
  // 32 MiB: more than the kernel's buffers take, so the rest waits in the process for the client.
  const { socket, closed } = await stalledClient('/bytes')
  await new Promise((resolve) => setTimeout(resolve, 500))
  expect(sent).toBe(1)
  socket.destroy()
  await closed
  await new Promise((resolve) => setTimeout(resolve, 50))
  expect(sent).toBe(2)
})
