import { readFileSync } from 'node:fs'
import { beforeAll, describe, expect, it } from 'vitest'
import { serve } from '../../adapters/node.js'
import type { BlobStore } from '../../src/ports/blob-store.js'
import { entityDocumentSchema } from '../../src/contract/schemas.js'
import { createMemoryBlobStore, createMemoryStore } from '../../src/memory/index.js'
import { API_KEY, importDemo, testRegistry } from '../support/demo.js'
import { expectError, readDocument } from '../support/documents.js'

const original = readFileSync(new URL('../../demo/renditions/hr3590-111-information.html', import.meta.url))

describe('rendition download', () => {
  const store = createMemoryStore()
  const blobs = createMemoryBlobStore()
  const { get } = testRegistry(store, { blobs })
  let content = ''
  let renditionPath = ''

  beforeAll(async () => {
    await importDemo(store.warehouse, blobs)
    const document = await readDocument(await get('/v1/entities/hr3590111'), entityDocumentSchema)
    content = document.data.attributes.texts![0]!.renditions[0]!.links.content
    renditionPath = new URL(content).pathname
  })

  it('serves the imported bytes with their type, language, length and name', async () => {
    const response = await get(content)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/html')
    expect(response.headers.get('content-language')).toBe('en')
    expect(response.headers.get('content-length')).toBe(String(original.length))
    expect(response.headers.get('content-disposition')).toBe(
      `inline; filename="hr3590-111-information.html"; filename*=UTF-8''hr3590-111-information.html`,
    )
    expect(response.headers.get('etag')).toMatch(/^".+"$/)
    expect(Buffer.from(await response.arrayBuffer()).equals(original)).toBe(true)
  })

  it('answers byte ranges, 416 outside them, and 304 for a matching ETag', async () => {
    const partial = await get(renditionPath, { headers: { Range: 'bytes=10-19' } })
    expect(partial.status).toBe(206)
    expect(partial.headers.get('content-range')).toBe(`bytes 10-19/${original.length}`)
    expect(Buffer.from(await partial.arrayBuffer()).equals(original.subarray(10, 20))).toBe(true)

    const suffix = await get(renditionPath, { headers: { Range: 'bytes=-5' } })
    expect(Buffer.from(await suffix.arrayBuffer()).equals(original.subarray(original.length - 5))).toBe(true)

    const outside = await get(renditionPath, { headers: { Range: `bytes=${original.length}-` } })
    expect(outside.headers.get('content-range')).toBe(`bytes */${original.length}`)
    await expectError(outside, 416, 'range_not_satisfiable')

    const etag = (await get(renditionPath, { method: 'HEAD' })).headers.get('etag')!
    expect((await get(renditionPath, { headers: { 'If-None-Match': etag } })).status).toBe(304)
    // Any representation (`*`), the tag compared weakly, or among others: not modified; another tag: the bytes.
    for (const tags of ['*', `W/${etag}`, `"other", ${etag}`]) expect((await get(renditionPath, { headers: { 'If-None-Match': tags } })).status).toBe(304)
    expect((await get(renditionPath, { headers: { 'If-None-Match': '"other", W/"another"' } })).status).toBe(200)
    // A stale If-Range gets the whole representation.
    expect((await get(renditionPath, { headers: { Range: 'bytes=0-1', 'If-Range': '"stale"' } })).status).toBe(200)
  })

  it('answers 416 to any range of an empty rendition, and serves it whole', async () => {
    const renditionId = `rnd_${'e'.repeat(32)}`
    await store.warehouse.upsert({ id: 'empty1', type: 'bill', texts: [{ renditions: [{ renditionId, conversion: 'original', mime: 'text/plain', filename: 'empty.txt' }] }] })
    await blobs.put(renditionId, new Uint8Array(0))
    const path = `/v1/entities/empty1/renditions/${renditionId}.txt`
    const whole = await get(path)
    expect([whole.status, whole.headers.get('content-length'), (await whole.arrayBuffer()).byteLength]).toEqual([200, '0', 0])
    for (const range of ['bytes=-5', 'bytes=0-', 'bytes=0-0']) {
      const response = await get(path, { headers: { Range: range } })
      expect(response.headers.get('content-range'), range).toBe('bytes */0')
      await expectError(response, 416, 'range_not_satisfiable')
    }
  })

  it('answers HEAD without a body and follows merges', async () => {
    const head = await get(renditionPath, { method: 'HEAD' })
    expect(head.headers.get('content-length')).toBe(String(original.length))
    expect(await head.text()).toBe('')

    await store.warehouse.upsert({ id: 'hr3590copy', type: 'legislation', title: 'copy' })
    await store.warehouse.merge('hr3590copy', 'hr3590111')
    const viaMerge = await get(renditionPath.replace('/hr3590111/', '/hr3590copy/'))
    expect(Buffer.from(await viaMerge.arrayBuffer()).equals(original)).toBe(true)
  })

  it('sends nosniff on every download and sandboxes the types a browser runs as documents', async () => {
    const served = async (mime: string, filename: string) => {
      const renditionId = `rnd_${Buffer.from(mime).toString('hex').padEnd(32, '0').slice(0, 32)}`
      await store.warehouse.upsert({ id: 'active1', type: 'bill', texts: [{ renditions: [{ renditionId, conversion: 'original', mime, filename }] }] })
      await blobs.put(renditionId, new TextEncoder().encode('<script>parent.document.title = "pwned"</script>'))
      const path = `/v1/entities/active1/renditions/${renditionId}.${filename.split('.').pop()}`
      const answers = [await get(path), await get(path, { method: 'HEAD' }), await get(path, { headers: { Range: 'bytes=0-3' } })]
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 206])
      return answers.map((answer) => [answer.headers.get('x-content-type-options'), answer.headers.get('content-security-policy')])
    }
    const sandboxed = Array(3).fill(['nosniff', 'sandbox'])
    const plain = Array(3).fill(['nosniff', null])
    expect(await served('text/html', 'a.html')).toEqual(sandboxed)
    expect(await served('Text/HTML; charset=utf-8', 'b.htm')).toEqual(sandboxed)
    expect(await served('application/xhtml+xml', 'c.xhtml')).toEqual(sandboxed)
    expect(await served('image/svg+xml', 'd.svg')).toEqual(sandboxed)
    expect(await served('text/xml', 'e.xml')).toEqual(sandboxed)
    expect(await served('text/plain', 'f.txt')).toEqual(plain)
    expect(await served('application/pdf', 'g.pdf')).toEqual(plain)
    expect(await served('image/png', 'h.png')).toEqual(plain)
    // The demo's own HTML rendition, through the whole registry.
    expect((await get(content)).headers.get('content-security-policy')).toBe('sandbox')
  })

  it('rejects malformed ids with 400 and unknown renditions with 404', async () => {
    await expectError(await get('/v1/entities/hr3590111/renditions/rnd_XYZ.html'), 400, 'invalid_id', 'renditionId')
    await expectError(await get('/v1/entities/HR/renditions/rnd_00000000000000000000000000000000.html'), 400, 'invalid_id', 'id')
    await expectError(await get('/v1/entities/hr3590111/renditions/rnd_00000000000000000000000000000000.html'), 404, 'not_found')
    await expectError(await get(renditionPath.replace(/\.html$/, '.pdf')), 404, 'not_found')
    await expectError(await get(renditionPath.replace('/hr3590111/', '/s1113/')), 404, 'not_found')
  })
})

describe('rendition download memory', () => {
  it('reads small renditions whole up to a budget in flight, and streams the rest', async () => {
    const store = createMemoryStore()
    const memory = createMemoryBlobStore()
    const renditionId = `rnd_${'b'.repeat(32)}`
    await store.warehouse.upsert({ id: 'small1', type: 'bill', texts: [{ renditions: [{ renditionId, conversion: 'original', mime: 'text/plain', filename: 'a.txt' }] }] })
    await memory.put(renditionId, new Uint8Array(64 * 1024))
    // Reads wait until released: every download of the burst is in flight at once.
    let release = () => {}
    const released = new Promise<void>((resolve) => (release = resolve))
    const calls = { read: 0, get: 0 }
    const blobs = {
      ...memory,
      read: async (key: string) => (calls.read++, await released, memory.read!(key)),
      get: async (key: string) => (calls.get++, memory.get(key)),
    }
    const { get } = testRegistry(store, { blobs })
    const downloads = Array.from({ length: 600 }, () => get(`/v1/entities/small1/renditions/${renditionId}.txt`))
    await new Promise((resolve) => setTimeout(resolve, 200))
    // 32 MiB in flight: 512 reads of 64 KiB; the others stream.
    expect(calls).toEqual({ read: 512, get: 88 })
    release()
    const sizes = await Promise.all(downloads.map(async (answered) => (await (await answered).arrayBuffer()).byteLength))
    expect(new Set(sizes)).toEqual(new Set([64 * 1024]))
    // Given back once sent (here, once the Response is made): the next download is read whole again.
    await get(`/v1/entities/small1/renditions/${renditionId}.txt`)
    expect(calls.read).toBe(513)
  })

  it('reads a download into the buffer of one written out, never into one a Response may still read', async () => {
    const store = createMemoryStore()
    const memory = createMemoryBlobStore()
    // 150 KiB: buffers of 256 KiB, a size no other download of this file takes.
    const contents = ['c', 'd'].map((letter) => ({ renditionId: `rnd_${letter.repeat(32)}`, bytes: new Uint8Array(150 * 1024).fill(letter.charCodeAt(0)) }))
    for (const { renditionId, bytes } of contents) {
      await store.warehouse.upsert({ id: `reuse${renditionId[4]}`, type: 'bill', texts: [{ renditions: [{ renditionId, conversion: 'original', mime: 'text/plain', filename: 'a.txt' }] }] })
      await memory.put(renditionId, bytes)
    }
    const paths = contents.map(({ renditionId }) => `/v1/entities/reuse${renditionId[4]}/renditions/${renditionId}.txt`)
    // The buffer each read was given, its bytes copied in as the file store reads them.
    const intos: Uint8Array[] = []
    const blobs: BlobStore = {
      ...memory,
      async read(key, range, into) {
        const bytes = (await memory.read!(key, range))!
        intos.push(into!)
        into!.set(bytes)
        return into!.subarray(0, bytes.length)
      },
    }
    const { registry, get } = testRegistry(store, { blobs })

    // Made into a Response: its bytes are not read into again, and it reads as it was.
    const handedOn = await get(paths[0]!)
    await (await get(paths[1]!)).arrayBuffer()
    // (Compared as a boolean: a failure would print both buffers.)
    expect(intos[1] === intos[0]).toBe(false)
    expect(Buffer.from(await handedOn.arrayBuffer()).equals(contents[0]!.bytes)).toBe(true)

    // Written out by the Node adapter: the next download is read into the same buffer, and is whole.
    const running = await serve(registry, { port: 0 })
    try {
      const download = async (path: string) => {
        const closed = new Promise<void>((resolve) => running.server.once('request', (_request, response) => response.once('close', () => setImmediate(resolve))))
        const response = await fetch(`${running.url}${path}`, { headers: { Authorization: `Bearer ${API_KEY}` } })
        const bytes = Buffer.from(await response.arrayBuffer())
        await closed
        return bytes
      }
      expect((await download(paths[0]!)).equals(contents[0]!.bytes)).toBe(true)
      expect((await download(paths[1]!)).equals(contents[1]!.bytes)).toBe(true)
      expect(intos[3] === intos[2]).toBe(true)
    } finally {
      await running.close()
    }
  })
})
