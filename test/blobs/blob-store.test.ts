import { expect, it } from 'vitest'
import { describeEachBlobStore } from './each-blob-store.js'

const bytesOf = (text: string) => new TextEncoder().encode(text)
const read = async (stream: ReadableStream<Uint8Array> | null) => (stream === null ? null : new Uint8Array(await new Response(stream).arrayBuffer()))
/** A stream of `count` chunks of `size` bytes, counting what was pulled. */
function chunked(count: number, size: number) {
  let pulled = 0
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled === count) return controller.close()
      controller.enqueue(new Uint8Array(size).fill(pulled++ % 251))
    },
  })
  return { stream, pulled: () => pulled }
}

describeEachBlobStore('blob store', (blobs) => {
  it('stores bytes and answers their size and a version', async () => {
    await blobs().put('rnd_a', bytesOf('hello world'))
    const info = await blobs().stat('rnd_a')
    expect(info?.size).toBe(11)
    expect(info?.version).toMatch(/^\S+$/)
    expect(await read(await blobs().get('rnd_a'))).toEqual(bytesOf('hello world'))
  })

  it('stores a stream as it reads it', async () => {
    const source = chunked(64, 16 * 1024)
    await blobs().put('rnd_s', source.stream)
    expect(source.pulled()).toBe(64)
    expect((await blobs().stat('rnd_s'))?.size).toBe(64 * 16 * 1024)
    const back = await read(await blobs().get('rnd_s', { start: 16 * 1024, end: 16 * 1024 + 3 }))
    expect(back).toEqual(new Uint8Array(4).fill(1))
  })

  it('reads inclusive byte ranges', async () => {
    await blobs().put('rnd_r', bytesOf('0123456789'))
    expect(await read(await blobs().get('rnd_r', { start: 2, end: 5 }))).toEqual(bytesOf('2345'))
    expect(await read(await blobs().get('rnd_r', { start: 9, end: 9 }))).toEqual(bytesOf('9'))
  })

  it('reads an empty blob, and a large one whole and in ranges exactly, however it reads it in parts', async () => {
    await blobs().put('rnd_e', new Uint8Array(0))
    expect(await read(await blobs().get('rnd_e'))).toEqual(new Uint8Array(0))
    const large = new Uint8Array(3 * 1024 * 1024 + 7).map((_, index) => (index * 7) % 253)
    await blobs().put('rnd_l', large)
    expect(Buffer.from((await read(await blobs().get('rnd_l')))!).equals(Buffer.from(large))).toBe(true)
    for (const [start, end] of [[1, large.length - 1], [65_535, 65_537], [100_000, 2_500_000], [large.length - 1, large.length - 1]] as const) {
      const part = await read(await blobs().get('rnd_l', { start, end }))
      expect(Buffer.from(part!).equals(Buffer.from(large.subarray(start, end + 1)))).toBe(true)
    }
  })

  it('replaces a blob, changing its version, and deletes it', async () => {
    await blobs().put('rnd_v', bytesOf('first'))
    const first = await blobs().stat('rnd_v')
    await new Promise((resolve) => setTimeout(resolve, 5))
    await blobs().put('rnd_v', bytesOf('second!'))
    const second = await blobs().stat('rnd_v')
    expect(second?.size).toBe(7)
    expect(second?.version).not.toBe(first?.version)
    await blobs().delete('rnd_v')
    expect(await blobs().stat('rnd_v')).toBeNull()
    expect(await blobs().get('rnd_v')).toBeNull()
    await blobs().delete('rnd_v') // deleting a missing blob is no error
  })

  it('reads a blob whole, or a range of it, where it can (read is optional)', async () => {
    const store = blobs()
    if (store.read === undefined) return
    await store.put('rnd_w', bytesOf('0123456789'))
    expect(await store.read('rnd_w')).toEqual(bytesOf('0123456789'))
    expect(await store.read('rnd_w', { start: 2, end: 5 })).toEqual(bytesOf('2345'))
    expect(await store.read('rnd_missing')).toBeNull()
    // Into a buffer given, longer than the range: the range's bytes, nothing past them.
    const into = new Uint8Array(16).fill(0xff)
    expect(await store.read('rnd_w', { start: 6, end: 9 }, into)).toEqual(bytesOf('6789'))
    expect(await store.read('rnd_missing', { start: 0, end: 3 }, into)).toBeNull()
  })

  it('answers null for a blob it does not hold', async () => {
    expect(await blobs().stat('rnd_missing')).toBeNull()
    expect(await blobs().get('rnd_missing')).toBeNull()
  })

  it('keeps nothing of a put whose stream fails', async () => {
    await blobs().put('rnd_f', bytesOf('kept'))
    const failing = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytesOf('partial'))
        controller.error(new Error('the source broke'))
      },
    })
    await expect(blobs().put('rnd_f', failing)).rejects.toThrow('the source broke')
    expect(await read(await blobs().get('rnd_f'))).toEqual(bytesOf('kept'))
  })
})
