import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { build } from 'esbuild'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createWorkerTextExtractor } from '../../src/node/text-worker.js'

let directory: string
let script: URL
beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'er-text-worker-'))
  // The thread script as the package's build makes it (`dist/text-extraction-worker.js`).
  await build({ entryPoints: ['src/node/text-extraction-worker.ts'], bundle: true, platform: 'node', format: 'esm', outfile: join(directory, 'worker.mjs'), logLevel: 'silent' })
  script = pathToFileURL(join(directory, 'worker.mjs'))
})
afterAll(() => rm(directory, { recursive: true, force: true }))

describe('text extraction in a worker', () => {
  it('extracts in the worker, one file after another, and ends it on close', async () => {
    const extractor = createWorkerTextExtractor({ script })
    const html = (text: string) => new TextEncoder().encode(`<p>${text}<script>x()</script></p>`)
    expect(await Promise.all([extractor.extract(html('one'), 'text/html'), extractor.extract(html('two'), 'text/html')])).toEqual([{ text: 'one' }, { text: 'two' }])
    expect(await extractor.extract(Uint8Array.from([0, 1, 2]), 'text/plain')).toEqual({ skipped: 'binary content' })
    await extractor.close()
  })

  it('skips an extraction that runs too long or takes too much memory, and goes on with a new worker', async () => {
    const hostile = join(directory, 'hostile.mjs')
    await writeFile(
      hostile,
      `import { parentPort } from 'node:worker_threads'
       parentPort.on('message', ({ id, mime }) => {
         if (mime === 'loop') for (;;) {}
         if (mime === 'bomb') { const held = []; for (;;) held.push(new Array(1e6).fill(1)) }
         // Fails after answering, between extractions: as a worker out of memory while it is terminated.
         if (mime === 'late') setTimeout(() => { throw new Error('late failure') }, 50)
         parentPort.postMessage({ id, extraction: { text: 'fine' } })
       })`,
    )
    const extractor = createWorkerTextExtractor({ script: pathToFileURL(hostile), timeoutMs: 1500 })
    const none = new Uint8Array(0)
    expect(await extractor.extract(none, 'loop')).toEqual({ skipped: 'extraction took longer than 1500 ms' })
    expect(await extractor.extract(none, 'text/plain')).toEqual({ text: 'fine' })
    expect(await extractor.extract(none, 'bomb')).toEqual({ skipped: expect.stringMatching(/^extraction (failed|took longer)/) })
    expect(await extractor.extract(none, 'text/plain')).toEqual({ text: 'fine' })
    // The failure finds no extraction to answer: it ends that worker, and not the process.
    expect(await extractor.extract(none, 'late')).toEqual({ text: 'fine' })
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(await extractor.extract(none, 'text/plain')).toEqual({ text: 'fine' })
    await extractor.close()
  }, 30_000)
})
