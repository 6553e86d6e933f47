import { existsSync } from 'node:fs'
import { Worker } from 'node:worker_threads'
import type { TextExtractor } from '../texts/entity-texts.js'
import { TEXT_LIMITS, type Extraction } from '../texts/limits.js'

/** Memory a worker may take: a document that expands past it (a PDF bomb) ends the worker, not the process. */
const WORKER_HEAP_MB = 512

export interface WorkerTextExtractor {
  extract: TextExtractor
  /** Ends the worker (a new one starts at the next extraction). */
  close(): Promise<void>
}

/**
 * Where the built thread script is: `dist/text-extraction-worker.js`, beside the chunk this code was
 * bundled into (the package root) or one folder up (an entry's folder), whichever holds it.
 */
export function builtWorkerScript(): URL | undefined {
  // Only inside the package's own dist/ (marked by its openapi.json): a bundler (Next.js's
  // Turbopack) copies the script alone as an asset, where it cannot load its chunks. There, no
  // script is found and extraction runs in the calling thread.
  return ['./text-extraction-worker.js', '../text-extraction-worker.js']
    .map((path) => new URL(path, import.meta.url))
    .find((url) => existsSync(url) && existsSync(new URL('./openapi.json', url)))
}

/**
 * Text extraction in a worker thread (`texts/extract`), so that a large file never blocks requests:
 * one extraction at a time; one that runs past `timeoutMs` or past the worker's memory ends the
 * worker and is skipped with the reason (the next starts a new worker).
 */
export function createWorkerTextExtractor({ script, timeoutMs = TEXT_LIMITS.timeoutMs }: { script: URL; timeoutMs?: number }): WorkerTextExtractor {
  let worker: Worker | undefined
  let queue: Promise<unknown> = Promise.resolve()
  let nextId = 0

  const started = () => {
    if (worker) return worker
    const created = new Worker(script, { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } })
    // An idle worker does not keep the process alive.
    created.unref()
    const forget = () => {
      if (worker === created) worker = undefined
    }
    created.on('exit', forget)
    // Also between extractions: a worker out of memory as it is terminated after a timeout must not
    // become an uncaught exception of the process (the extraction in hand was answered already).
    created.on('error', forget)
    return (worker = created)
  }

  const run = (bytes: Uint8Array, mime: string) =>
    new Promise<Extraction>((resolve) => {
      const thread = started()
      const id = nextId++
      const finish = (extraction: Extraction) => {
        clearTimeout(timer)
        thread.off('message', onMessage)
        thread.off('error', onError)
        resolve(extraction)
      }
      const onMessage = (message: { id: number; extraction: Extraction }) => {
        if (message.id === id) finish(message.extraction)
      }
      const onError = (error: Error) => {
        worker = undefined
        finish({ skipped: `extraction failed: ${error.message}` })
      }
      const timer = setTimeout(() => {
        worker = undefined
        void thread.terminate()
        finish({ skipped: `extraction took longer than ${timeoutMs} ms` })
      }, timeoutMs)
      thread.on('message', onMessage)
      thread.on('error', onError)
      // A copy: the caller's bytes stay usable.
      thread.postMessage({ id, bytes, mime })
    })

  return {
    extract(bytes, mime) {
      const result = queue.then(() => run(bytes, mime))
      queue = result
      return result
    },
    async close() {
      await queue
      await worker?.terminate()
      worker = undefined
    },
  }
}
