/** A process's garbage collected once its JS heap in use passes a ceiling. */
import { getHeapStatistics } from 'node:v8'
import { expect, it } from 'vitest'
import { keepHeapUnder } from '../../src/node/heap-ceiling.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

it('collects once the heap in use is past the ceiling, not while it is under, and stops when told', async () => {
  const inUse = getHeapStatistics().used_heap_size
  let over = 0
  let under = 0
  // A collector that frees nothing: what is in use stays live, above this ceiling.
  const stopOver = keepHeapUnder(inUse / 2, { intervalMs: 10, collect: () => over++ })
  const stopUnder = keepHeapUnder(inUse * 100, { intervalMs: 10, collect: () => under++ })
  await sleep(150)
  stopOver()
  stopUnder()
  // Once, not at each of some 15 looks: after a collection the next waits for twice what stayed live.
  expect(over).toBeGreaterThanOrEqual(1)
  expect(over).toBeLessThan(4)
  expect(under).toBe(0)
  const stopped = over
  await sleep(50)
  expect(over).toBe(stopped)
})

it('collects again once the heap in use has grown past twice what stayed live', async () => {
  const inUse = getHeapStatistics().used_heap_size
  let collections = 0
  let inUseAtFirst = 0
  const held: unknown[] = []
  const stop = keepHeapUnder(inUse / 2, {
    intervalMs: 10,
    collect: () => {
      inUseAtFirst ||= getHeapStatistics().used_heap_size
      collections++
    },
  })
  try {
    await sleep(50)
    expect(collections).toBe(1)
    // Live objects (held, not garbage) beyond twice what was in use at the first collection.
    while (getHeapStatistics().used_heap_size < 2 * inUseAtFirst + 8 * 1024 * 1024) held.push(Array.from({ length: 4096 }, (_, at) => ({ at })))
    await sleep(50)
    expect(collections).toBe(2)
  } finally {
    stop()
  }
  expect(held.length).toBeGreaterThan(0)
})
