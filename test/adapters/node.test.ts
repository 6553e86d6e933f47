import { request as httpRequest } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { serve, type RunningServer } from '../../adapters/node.js'
import { entityCollectionDocumentSchema, entityDocumentSchema } from '../../src/contract/schemas.js'
import { createMemoryBlobStore, createMemoryStore } from '../../src/memory/index.js'
import { API_KEY, testRegistry } from '../support/demo.js'
import { readDocument } from '../support/documents.js'

describe('node adapter', () => {
  const store = createMemoryStore()
  const blobs = createMemoryBlobStore()
  const big = new Uint8Array(8 * 1024 * 1024).map((_, index) => index % 251)
  let server: RunningServer
  const auth = { Authorization: `Bearer ${API_KEY}` }

  beforeAll(async () => {
    await store.warehouse.upsert({
      id: 'doc1',
      type: 'legislation',
      title: 'Big document',
      texts: [{ renditions: [{ renditionId: `rnd_${'a'.repeat(32)}`, conversion: 'original', mime: 'application/pdf', filename: 'big.pdf' }] }],
    })
    await blobs.put(`rnd_${'a'.repeat(32)}`, big)
    server = await serve(testRegistry(store, { blobs }).registry, { port: 0 })
  })
  afterAll(() => server?.close())

  it('serves JSON:API over HTTP with links on the address the client used', async () => {
    const response = await fetch(`${server.url}/v1/entities?page[limit]=1`, { headers: auth })
    const document = await readDocument(response, entityCollectionDocumentSchema)
    expect(document.links.self).toBe(`${server.url}/v1/entities?page%5Blimit%5D=1`)
    // fetch may not set Host; node:http may.
    const body = await new Promise<string>((resolve, reject) => {
      const request = httpRequest(`${server.url}/v1/entities/doc1`, { headers: { ...auth, Host: 'public.example:8443' } }, (response) => {
        let text = ''
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk)).on('end', () => resolve(text))
      })
      request.on('error', reject).end()
    })
    expect(entityDocumentSchema.parse(JSON.parse(body)).links.self).toBe('http://public.example:8443/v1/entities/doc1')
  })

  it('reads request headers as Fetch does: two Authorization fields are one value, which is not a valid key (401)', async () => {
    const status = (authorization: string | string[]) =>
      new Promise<number>((resolve, reject) => {
        const request = httpRequest(`${server.url}/v1/entities/doc1`, { headers: { authorization: authorization as string, ACCEPT: 'application/vnd.api+json' } }, (response) => {
          response.resume().on('end', () => resolve(response.statusCode!))
        })
        request.on('error', reject).end()
      })
    expect(await status(auth.Authorization)).toBe(200)
    // node:http's req.headers would keep only the first, and let it in.
    expect(await status([auth.Authorization, 'Bearer another'])).toBe(401)
  })

  it('streams a large rendition intact', async () => {
    const response = await fetch(`${server.url}/v1/entities/doc1/renditions/rnd_${'a'.repeat(32)}.pdf`, { headers: auth })
    expect(response.headers.get('content-length')).toBe(String(big.length))
    expect(Buffer.from(await response.arrayBuffer()).equals(Buffer.from(big))).toBe(true)
  })

  it('streams a body to a slow reader, waiting for the socket to drain again and again, with no listener left behind each time', async () => {
    const warnings: string[] = []
    const onWarning = (warning: Error) => warnings.push(warning.name)
    process.on('warning', onWarning)
    const chunk = new Uint8Array(64 * 1024).fill(7)
    const chunks = 160
    const body = () =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (let n = 0; n < chunks; n++) controller.enqueue(chunk)
          controller.close()
        },
      })
    const streaming = await serve({ fetch: async () => new Response(body()) }, { port: 0 })
    try {
      const received = await new Promise<number>((resolve, reject) => {
        httpRequest(`${streaming.url}/`, (response) => {
          let bytes = 0
          // Read a little at a time, so that the server's writes fill the socket and wait for it to drain.
          response.on('data', (data: Buffer) => {
            bytes += data.length
            response.pause()
            setTimeout(() => response.resume(), 2)
          })
          response.on('end', () => resolve(bytes)).on('error', reject)
        })
          .on('error', reject)
          .end()
      })
      expect(received).toBe(chunks * chunk.length)
      await new Promise((resolve) => setImmediate(resolve))
      expect(warnings).not.toContain('MaxListenersExceededWarning')
    } finally {
      process.off('warning', onWarning)
      await streaming.close()
    }
  })

  it('keeps serving after a client goes away mid-download', async () => {
    await new Promise<void>((resolve) => {
      const request = httpRequest(`${server.url}/v1/entities/doc1/renditions/rnd_${'a'.repeat(32)}.pdf`, { headers: auth }, (response) => {
        response.once('data', () => {
          request.destroy()
          resolve()
        })
      })
      request.end()
    })
    const response = await fetch(`${server.url}/v1/entities/doc1`, { headers: auth })
    expect(response.status).toBe(200)
  })
})
