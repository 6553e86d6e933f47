/**
 * The S3 blob store when object storage is away: unreachable (a closed port), paused (a server that
 * accepts and never answers), failing (5xx), or stalling mid-body. Every call fails within its bound
 * as `DependencyUnavailableError('blobs')`; a missing object is still null, and a slow reader is not cut.
 */
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http'
import { createServer, type Server, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { S3Client } from '@aws-sdk/client-s3'
import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest'
import { isNodeBacked, NODE_READABLE } from '../../src/blobs/node-backed-stream.js'
import { DependencyUnavailableError } from '../../src/ports/dependency.js'
import { createS3BlobStore } from '../../src/s3/index.js'
import { S3_CREDENTIALS, startS3Server, type S3Server } from '../support/s3-server.js'

const TIMEOUT_MS = 500
let s3: S3Server
const clients: S3Client[] = []
const servers: (Server | HttpServer)[] = []
const sockets: Socket[] = []

beforeAll(async () => {
  s3 = await startS3Server()
})
afterAll(() => s3.close())
afterEach(async () => {
  vi.unstubAllEnvs()
  for (const client of clients.splice(0)) client.destroy()
  for (const socket of sockets.splice(0)) socket.destroy()
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))))
})

const clientOf = (endpoint: string) => {
  const client = new S3Client({ endpoint, forcePathStyle: true, region: 'us-east-1', credentials: S3_CREDENTIALS })
  clients.push(client)
  return client
}
const storeAt = (endpoint: string, prefix = 'outage/') => createS3BlobStore({ client: clientOf(endpoint), bucket: s3.bucket, prefix, timeoutMs: TIMEOUT_MS })

async function listening<T extends Server | HttpServer>(server: T): Promise<string> {
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** Accepts connections and never answers: object storage paused (SIGSTOP) or a black hole. */
const silentEndpoint = () => listening(createServer((socket) => void sockets.push(socket)))

/** A port nothing listens on. */
async function closedEndpoint(): Promise<string> {
  const server = createServer()
  const endpoint = await listening(server)
  servers.splice(servers.indexOf(server), 1)
  await new Promise((resolve) => server.close(resolve))
  return endpoint
}

/** Rejects as the store being away, within `withinMs`. */
async function expectUnavailable(call: () => Promise<unknown>, withinMs: number): Promise<void> {
  const started = Date.now()
  const error = await call().then(
    () => null,
    (thrown: unknown) => thrown,
  )
  expect(error).toBeInstanceOf(DependencyUnavailableError)
  expect((error as DependencyUnavailableError).dependency).toBe('blobs')
  expect(Date.now() - started).toBeLessThan(withinMs)
}

it('answers unavailable when object storage is unreachable', async () => {
  const blobs = storeAt(await closedEndpoint())
  await expectUnavailable(() => blobs.stat('rnd_a'), 2000)
  await expectUnavailable(() => blobs.get('rnd_a'), 2000)
  await expectUnavailable(() => blobs.put('rnd_a', new Uint8Array(3)), 2000)
})

it('answers unavailable within the timeout when object storage accepts and never answers', async () => {
  const blobs = storeAt(await silentEndpoint())
  await expectUnavailable(() => blobs.stat('rnd_a'), TIMEOUT_MS + 1000)
  await expectUnavailable(() => blobs.get('rnd_a', { start: 0, end: 9 }), TIMEOUT_MS + 1000)
})

it('bounds the client it makes from the environment the same way, with its default timeout', async () => {
  vi.stubEnv('AWS_ENDPOINT_URL_S3', await silentEndpoint())
  vi.stubEnv('AWS_ACCESS_KEY_ID', S3_CREDENTIALS.accessKeyId)
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', S3_CREDENTIALS.secretAccessKey)
  const blobs = createS3BlobStore({ bucket: s3.bucket })
  await expectUnavailable(() => blobs.stat('rnd_a'), 5000)
})

it('answers unavailable for a 5xx, and null for a missing object', async () => {
  const failing = await listening(createHttpServer((_request, response) => response.writeHead(503).end()))
  await expectUnavailable(() => storeAt(failing).stat('rnd_a'), 5000)
  const blobs = storeAt(s3.endpoint)
  expect(await blobs.stat('rnd_missing')).toBeNull()
  expect(await blobs.get('rnd_missing')).toBeNull()
})

/**
 * An object store whose object has `size` bytes, that answers each range in full but stalls in the
 * range that starts at `stallFrom`, after 10 bytes of it.
 */
async function stallingFrom(stallFrom: number, size = 256 * 1024): Promise<string> {
  return listening(
    createHttpServer((request, response) => {
      const [, first = '0', last = '0'] = /bytes=(\d+)-(\d+)/.exec(request.headers.range ?? '') ?? []
      const [start, end] = [Number(first), Math.min(Number(last), size - 1)]
      response.writeHead(206, { 'Content-Length': String(end - start + 1), 'Content-Range': `bytes ${start}-${end}/${size}`, ETag: '"x"' })
      if (start === stallFrom) response.write(new Uint8Array(10))
      else response.end(new Uint8Array(end - start + 1))
    }),
  )
}

it('fails a download whose first bytes stall, before it is handed on: the download answers unavailable', async () => {
  await expectUnavailable(async () => storeAt(await stallingFrom(0)).get('rnd_a'), TIMEOUT_MS + 1000)
})

it('fails a download whose body stalls mid-way', async () => {
  const body = await storeAt(await stallingFrom(64 * 1024)).get('rnd_a')
  const started = Date.now()
  const error = await new Response(body).arrayBuffer().then(
    () => null,
    (thrown: unknown) => thrown,
  )
  expect(error).toBeInstanceOf(DependencyUnavailableError)
  expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 1000)
})

it('fails a download whose body stalls mid-way, read as the Node stream the Node adapter pipes', async () => {
  const body = (await storeAt(await stallingFrom(64 * 1024)).get('rnd_a'))!
  if (!isNodeBacked(body)) expect.unreachable('a download on Node is Node-backed')
  const started = Date.now()
  let read = 0
  const error = await (async () => {
    for await (const chunk of body[NODE_READABLE]()) read += (chunk as Buffer).byteLength
  })().then(
    () => null,
    (thrown: unknown) => thrown,
  )
  expect(error).toBeInstanceOf(DependencyUnavailableError)
  // The first window, and nothing of the one that stalled.
  expect(read).toBe(64 * 1024)
  expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 1000)
})

it('fails a download whose object is replaced while it reads, rather than mix the bytes of two versions', async () => {
  const blobs = storeAt(s3.endpoint)
  await blobs.put('rnd_replaced', new Uint8Array(1024 * 1024).fill(1))
  const body = await blobs.get('rnd_replaced')
  await blobs.put('rnd_replaced', new Uint8Array(1024 * 1024).fill(2))
  const read = await new Response(body).arrayBuffer().then(
    (bytes) => new Uint8Array(bytes),
    (thrown: unknown) => thrown,
  )
  expect(read).toBeInstanceOf(Error)
})

it('streams a download, as a Node stream, to a reader that pauses longer than the timeout', async () => {
  const blobs = storeAt(s3.endpoint)
  const bytes = new Uint8Array(2 * 1024 * 1024).map((_, index) => index % 251)
  await blobs.put('rnd_slow_node', bytes)
  const body = (await blobs.get('rnd_slow_node'))!
  if (!isNodeBacked(body)) expect.unreachable('a download on Node is Node-backed')
  const chunks: Buffer[] = []
  for await (const chunk of body[NODE_READABLE]()) {
    chunks.push(chunk as Buffer)
    if (chunks.length === 1) await new Promise((resolve) => setTimeout(resolve, 3 * TIMEOUT_MS))
  }
  expect(Buffer.concat(chunks).equals(Buffer.from(bytes))).toBe(true)
})

it('closes the object store\'s response when a download is cancelled unread', async () => {
  const blobs = storeAt(s3.endpoint)
  await blobs.put('rnd_unread', new Uint8Array(1024 * 1024))
  const body = (await blobs.get('rnd_unread'))!
  if (!isNodeBacked(body)) expect.unreachable('a download on Node is Node-backed')
  await body.cancel()
  expect(body[NODE_READABLE]().destroyed).toBe(true)
})

it('streams a download to a reader that pauses longer than the timeout', async () => {
  const blobs = storeAt(s3.endpoint)
  const bytes = new Uint8Array(2 * 1024 * 1024).map((_, index) => index % 251)
  await blobs.put('rnd_slow', bytes)
  const reader = (await blobs.get('rnd_slow'))!.getReader()
  const chunks: Uint8Array[] = []
  for (let result = await reader.read(); !result.done; result = await reader.read()) {
    chunks.push(result.value)
    if (chunks.length === 1) await new Promise((resolve) => setTimeout(resolve, 3 * TIMEOUT_MS))
  }
  expect(Buffer.concat(chunks).equals(Buffer.from(bytes))).toBe(true)
})

it('answers other calls while many downloads wait for readers (the client from the environment)', async () => {
  vi.stubEnv('AWS_ENDPOINT_URL_S3', s3.endpoint)
  vi.stubEnv('AWS_ACCESS_KEY_ID', S3_CREDENTIALS.accessKeyId)
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', S3_CREDENTIALS.secretAccessKey)
  // The default bound (3 s), not the short one of the outage cases: what is tested here is that held
  // bodies do not take every connection, and 60 answers of s3rver can take more than 500 ms on a busy machine.
  const blobs = createS3BlobStore({ bucket: s3.bucket, prefix: 'held/' })
  await blobs.put('rnd_held', new Uint8Array(1024 * 1024))
  // More than the SDK's default of 50 connections, each held by a body nobody reads.
  const held = await Promise.all(Array.from({ length: 60 }, () => blobs.get('rnd_held')))
  try {
    expect((await blobs.stat('rnd_held'))?.size).toBe(1024 * 1024)
  } finally {
    await Promise.all(held.map((body) => body!.cancel()))
  }
})

it('bounds the wait for a turn among the calls in flight by the same timeout', async () => {
  const blobs = createS3BlobStore({ client: clientOf(await silentEndpoint()), bucket: s3.bucket, timeoutMs: TIMEOUT_MS, concurrentCalls: 1 })
  // One call takes the turn and waits for an answer that never comes; the others wait for the turn,
  // and fail with it rather than each wait the timeout after the last (6 timeouts: 3 s).
  const started = Date.now()
  const outcomes = await Promise.allSettled(Array.from({ length: 6 }, (_, index) => blobs.stat(`rnd_${index}`)))
  for (const outcome of outcomes) expect(outcome.status === 'rejected' && outcome.reason instanceof DependencyUnavailableError).toBe(true)
  expect(Date.now() - started).toBeLessThan(2 * TIMEOUT_MS)
})

it('gives a turn back once a range is read, so that downloads beyond the calls allowed all complete', async () => {
  const blobs = createS3BlobStore({ client: clientOf(s3.endpoint), bucket: s3.bucket, prefix: 'turns/', timeoutMs: 3000, concurrentCalls: 1 })
  const bytes = Uint8Array.from({ length: 300 * 1024 }, (_, index) => index % 251)
  await blobs.put('rnd_turns', bytes)
  // Read at once, each a window after another: one call in flight at a time among all of them.
  const read = await Promise.all(Array.from({ length: 4 }, async () => new Uint8Array(await new Response(await blobs.get('rnd_turns')).arrayBuffer())))
  for (const copy of read) expect(Buffer.from(copy).equals(Buffer.from(bytes))).toBe(true)
})
