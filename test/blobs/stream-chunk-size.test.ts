import { expect, it } from 'vitest'
import { takeDownloadWindows, takeStreamChunkSize } from '../../src/blobs/stream-chunk-size.js'

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

it('reads windows twice as large each time up to 8 MiB, within a share of 32 MiB for every stream open', () => {
  const alone = takeDownloadWindows()
  expect(Array.from({ length: 9 }, () => alone.next() / 1024)).toEqual([64, 128, 256, 512, 1024, 2048, 4096, 8192, 8192])
  // 1,000 downloads open: a thousandth of 32 MiB each, whatever they read before.
  const crowd = Array.from({ length: 999 }, () => takeDownloadWindows())
  expect(alone.next()).toBe(Math.floor((32 * 1024 * 1024) / 1000))
  expect(crowd[0]!.next()).toBe(Math.floor((32 * 1024 * 1024) / 1000))
  for (const download of crowd) download.release()
  // Alone again: it grows back from where the crowd left it.
  expect(alone.next()).toBe(2 * Math.floor((32 * 1024 * 1024) / 1000))
  alone.release()
})
