/** A process's garbage collected once its JS heap in use passes a ceiling. */
import { getHeapStatistics } from 'node:v8'
import { expect, it } from 'vitest'
import { keepHeapUnder } from '../../src/node/heap-ceiling.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

it('collects while the heap in use is past the ceiling, not while it is under, and stops when told', async () => {
  const inUse = getHeapStatistics().used_heap_size
  let over = 0
  let under = 0
  const stopOver = keepHeapUnder(inUse / 2, { intervalMs: 10, collect: () => over++ })
  const stopUnder = keepHeapUnder(inUse * 100, { intervalMs: 10, collect: () => under++ })
  await sleep(100)
  stopOver()
  stopUnder()
  expect(over).toBeGreaterThan(3)
  expect(under).toBe(0)
  const stopped = over
  await sleep(50)
  expect(over).toBe(stopped)
})
