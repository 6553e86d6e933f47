import { expect, it } from 'vitest'
import { createBudget } from '../../src/blobs/budget.js'
import { takeStreamChunkSize } from '../../src/blobs/stream-chunk-size.js'
import { windowedDownload } from '../../src/blobs/windowed-download.js'

const object = new Uint8Array(3 * 1024 * 1024 + 5).map((_, index) => (index * 13) % 251)

/** A store that answers ranges of `object`, in chunks of 64 KiB as a socket reads them, counting the ranges asked. */
function rangeStore(bytes = object) {
  const ranges: [number, number][] = []
  return {
    ranges,
    async read(from: number, to: number) {
      ranges.push([from, to])
      const window = bytes.subarray(from, Math.min(to, bytes.length - 1) + 1)
      const chunks: Uint8Array[] = []
      for (let start = 0; start < window.length; start += 65_536) chunks.push(window.subarray(start, start + 65_536))
      return { chunks, size: bytes.length }
    },
  }
}

async function readAll(stream: AsyncIterable<Uint8Array>): Promise<Uint8Array[]> {
  const pieces: Uint8Array[] = []
  for await (const piece of stream) pieces.push(piece)
  return pieces
}

it('hands on the bytes asked for exactly, in pieces of 64 KiB, reading windows that double from 64 KiB', async () => {
  const store = rangeStore()
  const budget = createBudget(32 * 1024 * 1024)
  const pieces = await readAll((await windowedDownload({ from: 10, last: Infinity, read: store.read, budget }))!)
  expect(Buffer.concat(pieces).equals(Buffer.from(object.subarray(10)))).toBe(true)
  expect(Math.max(...pieces.map((piece) => piece.byteLength))).toBe(64 * 1024)
  expect(store.ranges.slice(0, 4).map(([from, to]) => to - from + 1)).toEqual([65_536, 131_072, 262_144, 524_288])
  expect(budget.held()).toBe(0)

  const range = await readAll((await windowedDownload({ from: 100_000, last: 100_009, read: store.read, budget }))!)
  expect(Buffer.concat(range).equals(Buffer.from(object.subarray(100_000, 100_010)))).toBe(true)
})

it('lets the window of a client that stopped reading go back to the budget, and reads it again when the client asks', async () => {
  const store = rangeStore()
  const budget = createBudget(32 * 1024 * 1024)
  const download = (await windowedDownload({ from: 0, last: Infinity, read: store.read, budget, idleMs: 50 }))!
  const iterator = download[Symbol.asyncIterator]()
  // Two pieces of 64 KiB: the first window whole, and half of the second (128 KiB).
  const read: Uint8Array[] = [(await iterator.next()).value as Uint8Array, (await iterator.next()).value as Uint8Array]
  expect(store.ranges).toEqual([[0, 65_535], [65_536, 196_607]])
  expect(budget.held()).toBe(131_072)
  await new Promise((resolve) => setTimeout(resolve, 150))
  expect(budget.held()).toBe(0)
  for (let next = await iterator.next(); !next.done; next = await iterator.next()) read.push(next.value as Uint8Array)
  expect(Buffer.concat(read).equals(Buffer.from(object))).toBe(true)
  // The window let go is read again from the first byte the stream had not handed on, not from its
  // start nor from its end, and small again.
  expect(store.ranges[2]).toEqual([131_072, 196_607])
  expect(budget.held()).toBe(0)
})

it('hands on smaller pieces in a crowd of streams, as file downloads read smaller chunks', async () => {
  const crowd = Array.from({ length: 300 }, () => takeStreamChunkSize())
  try {
    const pieces = await readAll((await windowedDownload({ from: 0, last: 200_000, read: rangeStore().read, budget: createBudget(1024 * 1024) }))!)
    expect(Math.max(...pieces.map((piece) => piece.byteLength))).toBe(8 * 1024)
  } finally {
    for (const taken of crowd) taken.release()
  }
})

it('makes a download wait while the budget is held by others, and gives it its turn once they let go', async () => {
  const store = rangeStore()
  const budget = createBudget(64 * 1024)
  const holding = (await windowedDownload({ from: 0, last: Infinity, read: store.read, budget, idleMs: 100 }))!
  let second: unknown
  const started = windowedDownload({ from: 0, last: 65_535, read: store.read, budget }).then((download) => (second = download))
  await new Promise((resolve) => setTimeout(resolve, 20))
  expect(second).toBeUndefined()
  // The first client never reads: its window goes back after `idleMs`, and the second starts.
  await started
  const pieces = await readAll(second as AsyncIterable<Uint8Array>)
  expect(Buffer.concat(pieces).equals(Buffer.from(object.subarray(0, 65_536)))).toBe(true)
  holding.destroy()
  expect(budget.held()).toBe(0)
})

it('answers null for a missing object, an empty stream for an empty one, and fails a short answer', async () => {
  const budget = createBudget(1024 * 1024)
  expect(await windowedDownload({ from: 0, last: Infinity, read: async () => null, budget })).toBeNull()
  expect(await readAll((await windowedDownload({ from: 0, last: Infinity, read: rangeStore(new Uint8Array(0)).read, budget }))!)).toEqual([])
  const short = windowedDownload({ from: 0, last: Infinity, read: async () => ({ chunks: [new Uint8Array(10)], size: 1000 }), budget })
  await expect(short).rejects.toThrow('the object store sent 10 bytes of 1000')
  expect(budget.held()).toBe(0)
})

it('takes at least the least while others hold the rest, and hands out what is given back in turn', async () => {
  const budget = createBudget(100)
  expect(await budget.take(80, 10)).toBe(80)
  expect(await budget.take(80, 10)).toBe(20)
  const waiting = budget.take(50, 10)
  const aborted = new AbortController()
  const gaveUp = budget.take(50, 10, aborted.signal)
  aborted.abort(new Error('gone'))
  await expect(gaveUp).rejects.toThrow('gone')
  budget.give(80)
  expect(await waiting).toBe(50)
  expect(budget.held()).toBe(70)
})
