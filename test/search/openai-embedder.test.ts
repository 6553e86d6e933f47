/** The OpenAI-compatible embedder against a local server that speaks the protocol. */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createOpenAiEmbedder } from '../../src/embedders/index.js'

const DIMENSIONS = 4

/** A deterministic embedding of a text: its letters counted into four buckets. */
const embeddingOf = (text: string) => [...text].reduce((vector, char) => ((vector[char.charCodeAt(0) % DIMENSIONS]! += 1), vector), [1, 0, 0, 0])

describe('OpenAI-compatible embedder', () => {
  let server: Server
  let url = ''
  const requests: { authorization: string | undefined; body: { model: string; input: string[] } }[] = []
  beforeAll(async () => {
    server = createServer((request, response) => {
      let text = ''
      request.on('data', (chunk) => (text += chunk))
      request.on('end', () => {
        const body = JSON.parse(text)
        requests.push({ authorization: request.headers.authorization, body })
        if (request.url !== '/v1/embeddings' || request.method !== 'POST') return void response.writeHead(404).end()
        if (body.model === 'broken') return void response.writeHead(503, { 'Content-Type': 'application/json' }).end('{"error":"model loading"}')
        const data = body.input.map((input: string, index: number) => ({
          object: 'embedding',
          index,
          embedding: body.model === 'wide' ? [...embeddingOf(input), 0] : embeddingOf(input),
        }))
        // Out of order on purpose: clients must order by `index`.
        response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ object: 'list', data: data.reverse(), model: body.model }))
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
  })
  afterAll(() => new Promise((resolve) => server.close(resolve)))

  it('embeds in batches, in order, with unit-length vectors and the key as a bearer token', async () => {
    const embedder = createOpenAiEmbedder({ url, model: 'tiny', apiKey: 'sk-secret', dimensions: DIMENSIONS, batchSize: 2 })
    const texts = ['a', 'bb', 'ccc', 'dddd', 'e']
    const vectors = await embedder.embed(texts)
    expect(vectors).toHaveLength(5)
    texts.forEach((text, index) => {
      const expected = embeddingOf(text)
      const norm = Math.hypot(...expected)
      expect(Array.from(vectors[index]!).map((value) => value.toFixed(5))).toEqual(expected.map((value) => (value / norm).toFixed(5)))
    })
    expect(requests.slice(-3).map((request) => request.body.input)).toEqual([['a', 'bb'], ['ccc', 'dddd'], ['e']])
    expect(requests.at(-1)!.authorization).toBe('Bearer sk-secret')
    expect(embedder.id).toBe('openai-compatible:tiny@4')
  })

  it('fails clearly on an error answer or a wrong size, never naming the key', async () => {
    const broken = createOpenAiEmbedder({ url, model: 'broken', apiKey: 'sk-secret', dimensions: DIMENSIONS })
    const error = await broken.embed(['x']).catch((reason: Error) => reason)
    expect(String(error)).toContain('answered 503')
    expect(String(error)).not.toContain('sk-secret')
    const wide = createOpenAiEmbedder({ url, model: 'wide', dimensions: DIMENSIONS })
    await expect(wide.embed(['x'])).rejects.toThrow('returned 5 dimensions, not 4')
  })
})
