import { expect, it } from 'vitest'
import { takeStreamChunkSize } from '../../src/blobs/stream-chunk-size.js'

it('reads in 64 KiB chunks while few streams are open, in 16 KiB chunks past 64 of them, in 8 KiB past 256', () => {
  const open = Array.from({ length: 64 }, () => takeStreamChunkSize())
  expect(new Set(open.map((chunk) => chunk.size))).toEqual(new Set([64 * 1024]))
  const crowded = takeStreamChunkSize()
  expect(crowded.size).toBe(16 * 1024)
  // Releasing twice counts once: the 64th stream after one release reads in full chunks again.
  open[0]!.release()
  open[0]!.release()
  crowded.release()
  const next = takeStreamChunkSize()
  expect(next.size).toBe(64 * 1024)
  const second = takeStreamChunkSize()
  expect(second.size).toBe(16 * 1024)
  const more = Array.from({ length: 191 }, () => takeStreamChunkSize())
  expect(more.at(-1)!.size).toBe(16 * 1024)
  const last = takeStreamChunkSize()
  expect(last.size).toBe(8 * 1024)
  for (const stream of [...open, next, second, ...more, last]) stream.release()
})
