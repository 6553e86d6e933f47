// Search inside the documents, what it costs: text extraction throughput over the demo's renditions
// (through the worker thread), the size of the LanceDB index without and with passages,
// and the time from an empty data directory to the demo imported and its texts searchable
// (`serve --demo`: `immigration reform citizenship` finds s1113).
// `node bench/texts.mjs` after `npm run build`.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'
import { createEntityTexts, createIndexer } from '../dist/index.js'
import { createWordVectorEmbedder } from '../dist/embedders/index.js'
import { createLancedbSearchIndex } from '../dist/lancedb/index.js'
import { createMemoryBlobStore, createMemoryStore } from '../dist/memory/index.js'
import { createWorkerTextExtractor, importNdjson, openEmbeddedRegistry } from '../dist/node/index.js'
import { machine } from './lib.mjs'

console.log(`machine: ${machine()}`)
const demo = new URL('../demo/', import.meta.url).pathname
const files = readdirSync(join(demo, 'renditions')).map((name) => readFileSync(join(demo, 'renditions', name)))
const megabytes = files.reduce((sum, bytes) => sum + bytes.length, 0) / 1e6

{
  const extractor = createWorkerTextExtractor({ script: new URL('../dist/text-extraction-worker.js', import.meta.url) })
  const run = extractor.extract
  await run(files[0], 'text/html')
  const started = performance.now()
  let characters = 0
  for (let round = 0; round < 5; round++) for (const bytes of files) characters += (await run(bytes, 'text/html')).text.length
  const seconds = (performance.now() - started) / 1000
  console.log(`extraction in the worker: ${((5 * megabytes) / seconds).toFixed(1)} MB of HTML a second (${files.length} files, ${megabytes.toFixed(2)} MB; ${((characters / 5) / 1e6).toFixed(2)} M characters of text)`)
  await extractor.close()
}

const sizeOf = (path) => (statSync(path).isDirectory() ? readdirSync(path).reduce((sum, name) => sum + sizeOf(join(path, name)), 0) : statSync(path).size)
const store = createMemoryStore()
const blobs = createMemoryBlobStore()
await importNdjson(readFileSync(`${demo}entities.jsonl`, 'utf8').split('\n'), { warehouse: store.warehouse, blobs, baseDir: demo })
const embedder = createWordVectorEmbedder()
const directory = mkdtempSync(join(tmpdir(), 'er-texts-bench-'))
for (const withTexts of [false, true]) {
  const uri = join(directory, String(withTexts))
  const index = await createLancedbSearchIndex({ uri, dimensions: embedder.dimensions })
  const indexer = createIndexer({ store, index, embedder, ...(withTexts ? { texts: createEntityTexts({ blobs }) } : {}) })
  const started = performance.now()
  await indexer.catchUp()
  await index.optimize()
  const seconds = (performance.now() - started) / 1000
  console.log(`LanceDB index ${withTexts ? 'with' : 'without'} passages: ${(sizeOf(uri) / 1e6).toFixed(2)} MB, built in ${seconds.toFixed(2)} s`)
  await index.close()
}

// From nothing to the demo's texts searchable, as `serve --demo` does it.
const data = join(directory, 'serve')
const key = 'bench-key-0123456789'
const started = performance.now()
const embedded = await openEmbeddedRegistry({ data, demo: true, apiKeys: [key], print: () => {}, metrics: false })
for (;;) {
  const response = await embedded.registry.fetch(new Request('http://bench/v1/search?q=immigration%20reform%20citizenship', { headers: { Authorization: `Bearer ${key}` } }))
  const ids = (await response.json()).data?.map((entity) => entity.id) ?? []
  if (ids.slice(0, 5).includes('s1113')) break
  await new Promise((resolve) => setTimeout(resolve, 50))
}
console.log(`serve --demo: imported and its texts searchable (s1113 in the top 5) in ${((performance.now() - started) / 1000).toFixed(2)} s`)
await embedded.close()
rmSync(directory, { recursive: true, force: true })
