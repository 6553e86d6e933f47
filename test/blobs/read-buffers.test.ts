import { expect, it } from 'vitest'
import { createReadBuffers } from '../../src/blobs/read-buffers.js'

const KiB = 1024

it('gives buffers of the power of two that holds the length, within the limit', () => {
  const buffers = createReadBuffers({ limit: 1024 * KiB, keep: 1024 * KiB })
  expect(buffers.take(1)!.byteLength).toBe(16 * KiB)
  expect(buffers.take(327 * KiB)!.byteLength).toBe(512 * KiB)
  // 528 KiB taken: a 512 KiB buffer more would pass the limit, a 256 KiB one does not.
  expect(buffers.take(300 * KiB)).toBeNull()
  expect(buffers.take(256 * KiB)!.byteLength).toBe(256 * KiB)
})

it('reads into a buffer again only once it was given back reusable', () => {
  const buffers = createReadBuffers({ limit: 1024 * KiB, keep: 1024 * KiB })
  const handedOn = buffers.take(100 * KiB)!
  buffers.give(handedOn, false)
  const written = buffers.take(100 * KiB)!
  // Identity compared as booleans: a failure would print the buffers.
  expect(written === handedOn).toBe(false)
  buffers.give(written, true)
  expect(buffers.take(120 * KiB) === written).toBe(true)
  // That one is taken again: the next is a new one.
  expect(buffers.take(100 * KiB) === written).toBe(false)
})

it('frees the limit as buffers are given back, and keeps no more than `keep` of them', () => {
  const buffers = createReadBuffers({ limit: 1024 * KiB, keep: 512 * KiB })
  const taken = [buffers.take(256 * KiB)!, buffers.take(256 * KiB)!, buffers.take(256 * KiB)!, buffers.take(256 * KiB)!]
  expect(buffers.take(16 * KiB)).toBeNull()
  for (const buffer of taken) buffers.give(buffer, true)
  // Two kept (512 KiB), two let go; all the limit free again.
  const again = [buffers.take(256 * KiB)!, buffers.take(256 * KiB)!, buffers.take(256 * KiB)!, buffers.take(256 * KiB)!]
  expect(again.filter((buffer) => taken.includes(buffer))).toHaveLength(2)
})
