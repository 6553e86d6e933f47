import { getHeapStatistics } from 'node:v8'
import { exposedGarbageCollector } from './collect-after-crowds.js'

export interface HeapCeilingOptions {
  /** How often the heap in use is looked at (default 200 ms). */
  intervalMs?: number
  /** Collects garbage in full; `exposedGarbageCollector()` by default (none: nothing is watched). */
  collect?: () => void
}

/**
 * Collects garbage in full whenever the JS heap in use has passed `bytes`. A batch process that
 * allocates fast lets V8 grow its old generation far past what it holds: an import of 10,000-line
 * batches holds some 45 MB, yet peaked at 370 to 400 MB resident on PostgreSQL with 200 MB of garbage
 * between V8's own collections. Where more than half of `bytes` is still live after a collection, the
 * next waits until the heap in use is twice what was live, so that a process holding more than it was
 * thought to is not collected at every look. Returns a function that stops watching.
 */
export function keepHeapUnder(bytes: number, { intervalMs = 200, collect = exposedGarbageCollector() }: HeapCeilingOptions = {}): () => void {
  if (collect === undefined) return () => {}
  let ceiling = bytes
  const timer = setInterval(() => {
    if (getHeapStatistics().used_heap_size <= ceiling) return
    collect()
    ceiling = Math.max(bytes, 2 * getHeapStatistics().used_heap_size)
  }, intervalMs)
  timer.unref()
  return () => clearInterval(timer)
}
