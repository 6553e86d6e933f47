/**
 * The transformers.js embedder over a real model made at test time (test/support/tiny-model.ts): the
 * real package, tokenizer and ONNX Runtime, with fetch refused throughout, so nothing is downloaded.
 * Nothing is skipped: if @huggingface/transformers cannot load here, these tests fail. The package
 * test runs the published embedder over transformers.js 3.0 (two ONNX Runtimes cannot share a process).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createTransformersEmbedder } from '../../src/embedders/index.js'
import { parseGffs } from '../../src/gffs/parse.js'
import { createMemorySearchIndex } from '../../src/memory/memory-search-index.js'
import { createMemoryStore } from '../../src/memory/memory-store.js'
import { createIndexer } from '../../src/search/indexer.js'
import { createSearch } from '../../src/search/search-service.js'
import { TINY_MODEL_HIDDEN_SIZE, writeTinyModel } from '../support/tiny-model.js'

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, index) => sum + value * b[index]!, 0)
const norm = (vector: Float32Array) => Math.hypot(...vector)

describe('transformers.js embedder', () => {
  let modelPath = ''
  const realFetch = globalThis.fetch
  const fetched: string[] = []
  beforeAll(() => {
    modelPath = writeTinyModel('tiny-bert')
    globalThis.fetch = async (input) => {
      fetched.push(String(input instanceof Request ? input.url : input))
      throw new Error('no network in this test')
    }
  })
  afterAll(() => {
    globalThis.fetch = realFetch
    rmSync(dirname(modelPath), { recursive: true, force: true })
    expect(fetched).toEqual([])
  })

  it('embeds each text into a unit vector of the model size, in batches, the same text the same way', async () => {
    const embedder = createTransformersEmbedder({ modelPath, batchSize: 2 })
    expect(embedder.dimensions).toBe(TINY_MODEL_HIDDEN_SIZE)
    expect(embedder.id).toBe(`transformers:tiny-bert@${TINY_MODEL_HIDDEN_SIZE}:mean:fp32`)
    const texts = ['Ada Lovelace', 'the piano composers of London', 'Senate committee on agriculture', 'a river bridge', 'Ada Lovelace']
    const vectors = await embedder.embed(texts)
    expect(vectors).toHaveLength(texts.length)
    for (const vector of vectors) {
      expect(vector).toBeInstanceOf(Float32Array)
      expect(vector).toHaveLength(TINY_MODEL_HIDDEN_SIZE)
      expect(norm(vector)).toBeCloseTo(1, 5)
    }
    expect(Array.from(vectors[4]!)).toEqual(Array.from(vectors[0]!))
    // Batched or alone, in another order: the same vector.
    const [alone] = await embedder.embed(['the piano composers of London'])
    expect(Array.from(alone!).map((value) => value.toFixed(5))).toEqual(Array.from(vectors[1]!).map((value) => value.toFixed(5)))
  })

  it('puts texts that share words closer than texts that share none', async () => {
    const embedder = createTransformersEmbedder({ modelPath })
    const [piano, composer, senate, bridge] = await embedder.embed(['piano music', 'a piano composer', 'the senate tax bill', 'river bridge of paris'])
    for (const unrelated of [senate!, bridge!]) {
      expect(cosine(piano!, composer!)).toBeGreaterThan(cosine(piano!, unrelated))
      expect(cosine(composer!, piano!)).toBeGreaterThan(cosine(composer!, unrelated))
    }
  })

  it('answers all zeros for a text with nothing to embed', async () => {
    const embedder = createTransformersEmbedder({ modelPath })
    const [blank, unknown, known] = await embedder.embed(['  ', 'zebra quokka', 'piano'])
    expect(Array.from(blank!)).toEqual(new Array(TINY_MODEL_HIDDEN_SIZE).fill(0))
    expect(Array.from(unknown!)).toEqual(new Array(TINY_MODEL_HIDDEN_SIZE).fill(0))
    expect(norm(known!)).toBeCloseTo(1, 5)
    expect(await embedder.embed([])).toEqual([])
  })

  it('names the model directory, the size, the pooling and the weights in its id', () => {
    expect(createTransformersEmbedder({ modelPath, pooling: 'cls' }).id).toBe(`transformers:tiny-bert@${TINY_MODEL_HIDDEN_SIZE}:cls:fp32`)
    expect(createTransformersEmbedder({ modelPath: `${modelPath}/` }).id).toBe(`transformers:${basename(modelPath)}@${TINY_MODEL_HIDDEN_SIZE}:mean:fp32`)
  })

  it('pools the first token with cls', async () => {
    // [CLS] embeds to zeros in the tiny model, so CLS pooling answers zeros: the option reaches the model.
    const [vector] = await createTransformersEmbedder({ modelPath, pooling: 'cls' }).embed(['piano'])
    expect(Array.from(vector!)).toEqual(new Array(TINY_MODEL_HIDDEN_SIZE).fill(0))
  })

  it('fails clearly on a missing directory, missing files or a wrong size, before downloading anything', async () => {
    const missing = join(dirname(modelPath), 'no-such-model')
    expect(() => createTransformersEmbedder({ modelPath: missing })).toThrow(`no model directory at ${missing}: download a model`)
    const partial = join(dirname(modelPath), 'partial')
    mkdirSync(partial)
    writeFileSync(join(partial, 'config.json'), '{"model_type":"bert","hidden_size":8}')
    expect(() => createTransformersEmbedder({ modelPath: partial })).toThrow(`the model directory ${partial} lacks tokenizer.json, tokenizer_config.json, onnx/model.onnx`)
    expect(() => createTransformersEmbedder({ modelPath, dtype: 'q8' })).toThrow('lacks onnx/model_quantized.onnx')
    const wrong = createTransformersEmbedder({ modelPath, dimensions: 384 })
    expect(wrong.id).toBe('transformers:tiny-bert@384:mean:fp32')
    await expect(wrong.embed(['piano'])).rejects.toThrow(`the model in ${modelPath} answered ${TINY_MODEL_HIDDEN_SIZE} dimensions, not 384`)
  })

  it('says to install @huggingface/transformers when it is not installed', async () => {
    vi.resetModules()
    vi.doMock('@huggingface/transformers', () => {
      throw new Error("Cannot find package '@huggingface/transformers'")
    })
    try {
      const { createTransformersEmbedder: withoutPackage } = await import('../../src/embedders/transformers-embedder.js')
      await expect(withoutPackage({ modelPath }).embed(['piano'])).rejects.toThrow(
        /^createTransformersEmbedder needs the package @huggingface\/transformers \(version 3\), which did not load \(.+\): npm install @huggingface\/transformers@3$/,
      )
    } finally {
      vi.doUnmock('@huggingface/transformers')
      vi.resetModules()
    }
  })

  it('serves search end to end: indexed through the memory index, found by meaning where no word matches', async () => {
    const store = createMemoryStore()
    await store.warehouse.upsert({ id: 'p1', type: 'person', name: 'Clara Schumann', title: 'Piano composer of London' })
    await store.warehouse.upsert({ id: 'c1', type: 'committee', name: 'Agriculture', title: 'Senate committee on agriculture' })
    await store.warehouse.upsert({ id: 'b1', type: 'place', name: 'Pont Neuf', title: 'River bridge of Paris' })
    const embedder = createTransformersEmbedder({ modelPath })
    const index = createMemorySearchIndex()
    expect(await createIndexer({ store, index, embedder }).catchUp()).toBe(3)
    const search = createSearch(store, { index, embedder })
    const ids = async (q: string) => (await search.search(parseGffs(q, { allowFreeText: true }))).map((entity) => entity.id)
    expect((await ids('piano'))[0]).toBe('p1')
    expect((await ids('bridge'))[0]).toBe('b1')
    // No entity holds "zebra", so full text finds nothing: the vectors alone rank the committee first.
    expect((await ids('senate agriculture zebra'))[0]).toBe('c1')
  })
})
