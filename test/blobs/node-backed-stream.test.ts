import { Readable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { serve } from '../../adapters/node.js'
import { nodeBackedStream } from '../../src/blobs/node-backed-stream.js'

const chunks = ['first ', 'second ', 'third']

describe('a Node-backed Web stream', () => {
  it('opens its Node stream only when read, and reads as a Web stream', async () => {
    let opened = 0
    const stream = nodeBackedStream(() => (opened++, Readable.from(chunks.map((chunk) => Buffer.from(chunk)))))
    expect(opened).toBe(0)
    expect(await new Response(stream).text()).toBe(chunks.join(''))
    expect(opened).toBe(1)
  })

  it('ends its Node stream when cancelled part way', async () => {
    let source: Readable | undefined
    const stream = nodeBackedStream(() => (source = Readable.from(chunks.map((chunk) => Buffer.from(chunk)))))
    const reader = stream.getReader()
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('first ')
    await reader.cancel()
    expect(source!.destroyed).toBe(true)
  })

  it('is piped by the Node adapter as the Node stream itself, its Web side never read', async () => {
    let opened = 0
    const body = nodeBackedStream(() => (opened++, Readable.from(chunks.map((chunk) => Buffer.from(chunk)))))
    // Reading the Web side would take the Node stream through it: make that fail loudly.
    Object.defineProperty(body, 'getReader', { value: () => expect.unreachable('the Web side was read') })
    const handler = {
      answer: async () => ({ status: 200, headers: { 'Content-Type': 'text/plain' }, body }),
      fetch: async () => new Response(null, { status: 500 }),
    }
    const server = await serve(handler, { port: 0 })
    try {
      const response = await fetch(server.url)
      expect([response.status, await response.text(), opened]).toEqual([200, chunks.join(''), 1])
    } finally {
      await server.close()
    }
  })
})
