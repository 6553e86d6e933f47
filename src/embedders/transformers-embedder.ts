import { existsSync, readFileSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import type { Embedder } from '../ports/embedder.js'

/** The weights a transformers.js model directory may hold, each in its own file under `onnx/`. */
export type TransformersDtype = 'fp32' | 'fp16' | 'q8' | 'int8' | 'uint8' | 'q4' | 'q4f16' | 'bnb4'

export interface TransformersEmbedderOptions {
  /**
   * A directory holding a model in the transformers.js layout (as on the Hugging Face hub, e.g.
   * `Xenova/all-MiniLM-L6-v2`): `config.json`, `tokenizer.json`, `tokenizer_config.json` and
   * `onnx/model.onnx` (or the file of `dtype`). Nothing is ever downloaded.
   */
  modelPath: string
  /** The vectors' size; by default the model's `hidden_size` in `config.json`. Checked against every output. */
  dimensions?: number
  /** How the token vectors become one vector per text: `mean` (sentence-transformers models, the default) or `cls`. */
  pooling?: 'mean' | 'cls'
  /** Texts per run of the model (default 32). */
  batchSize?: number
  /** Which weights to load (default `fp32`, `onnx/model.onnx`; `q8` is `onnx/model_quantized.onnx`). */
  dtype?: TransformersDtype
}

/** The suffix of each dtype's file, as transformers.js names them. */
const DTYPE_FILE_SUFFIX: Record<TransformersDtype, string> = {
  fp32: '',
  fp16: '_fp16',
  q8: '_quantized',
  int8: '_int8',
  uint8: '_uint8',
  q4: '_q4',
  q4f16: '_q4f16',
  bnb4: '_bnb4',
}

/** What this file uses of `@huggingface/transformers`, kept local so that its types are never needed. */
interface PoolingOutput {
  dims: number[]
  type: string
  data: ArrayLike<number>
  to?(type: 'float32'): PoolingOutput
}
type FeatureExtractor = (texts: string[], options: { pooling: 'mean' | 'cls'; normalize: false }) => Promise<PoolingOutput>
interface TransformersModule {
  env: { version: string; localModelPath: string }
  pipeline(task: 'feature-extraction', model: string, options: { local_files_only: true; dtype: TransformersDtype; device: 'cpu' }): Promise<FeatureExtractor>
}

/**
 * Embeds with a transformers.js model (`@huggingface/transformers` 3, an optional peer: install it
 * to use this) from a directory you downloaded it into: ONNX Runtime on the CPU, in process, offline.
 * The package loads on the first `embed`. The id names the directory, the size, the pooling and the
 * weights (`transformers:all-MiniLM-L6-v2@384:mean:fp32`), so another model means a rebuilt index.
 */
export function createTransformersEmbedder(options: TransformersEmbedderOptions): Embedder {
  const directory = resolve(options.modelPath)
  const pooling = options.pooling ?? 'mean'
  const dtype = options.dtype ?? 'fp32'
  const batchSize = options.batchSize ?? 32
  if (!(pooling === 'mean' || pooling === 'cls')) throw new Error(`pooling is 'mean' or 'cls', not ${String(pooling)}`)
  if (!Object.hasOwn(DTYPE_FILE_SUFFIX, dtype)) throw new Error(`dtype is one of ${Object.keys(DTYPE_FILE_SUFFIX).join(', ')}, not ${String(dtype)}`)
  if (!(Number.isInteger(batchSize) && batchSize > 0)) throw new Error(`batchSize is a positive integer, not ${batchSize}`)
  checkModelDirectory(directory, dtype)
  const dimensions = options.dimensions ?? hiddenSizeOf(directory)
  let extractor: Promise<FeatureExtractor> | undefined

  return {
    id: `transformers:${basename(directory)}@${dimensions}:${pooling}:${dtype}`,
    dimensions,
    async embed(texts) {
      const vectors = texts.map(() => new Float32Array(dimensions))
      // A blank text has nothing to embed: it stays all zeros, and never reaches the model.
      const filled = texts.flatMap((text, index) => (text.trim() === '' ? [] : [index]))
      if (filled.length === 0) return vectors
      extractor ??= loadExtractor(directory, dtype).catch((error: unknown) => {
        extractor = undefined
        throw error
      })
      const extract = await extractor
      for (let start = 0; start < filled.length; start += batchSize) {
        const batch = filled.slice(start, start + batchSize)
        let output = await extract(batch.map((index) => texts[index]!), { pooling, normalize: false })
        if (output.type !== 'float32' && output.to) output = output.to('float32')
        const [rows, columns] = output.dims
        if (rows !== batch.length || output.dims.length !== 2) throw new Error(`the model in ${directory} answered [${output.dims.join(', ')}] for ${batch.length} texts`)
        if (columns !== dimensions) throw new Error(`the model in ${directory} answered ${columns} dimensions, not ${dimensions} (pass dimensions: ${columns})`)
        batch.forEach((index, row) => {
          const vector = vectors[index]!
          for (let column = 0; column < dimensions; column++) vector[column] = output.data[row * dimensions + column]!
          unitLength(vector)
        })
      }
      return vectors
    },
  }
}

function checkModelDirectory(directory: string, dtype: TransformersDtype): void {
  const howTo = 'download a model in the transformers.js layout (e.g. Xenova/all-MiniLM-L6-v2) into a directory and point modelPath at it'
  if (!existsSync(directory)) throw new Error(`no model directory at ${directory}: ${howTo}`)
  const files = ['config.json', 'tokenizer.json', 'tokenizer_config.json', `onnx/model${DTYPE_FILE_SUFFIX[dtype]}.onnx`]
  // The model is the user's, found at run time: Next.js's Turbopack otherwise traces the whole project for it.
  const missing = files.filter((file) => !existsSync(join(/* turbopackIgnore: true */ directory, file)))
  if (missing.length > 0) throw new Error(`the model directory ${directory} lacks ${missing.join(', ')}: ${howTo}`)
}

/** The size of the model's hidden states, which mean and CLS pooling keep. */
function hiddenSizeOf(directory: string): number {
  const file = join(directory, 'config.json')
  let config: Record<string, unknown>
  try {
    config = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>
  } catch (cause) {
    throw new Error(`cannot read ${file}: ${(cause as Error).message}`, { cause })
  }
  const size = [config.hidden_size, config.d_model, config.dim, config.n_embd].find((value) => Number.isInteger(value) && (value as number) > 0)
  if (size === undefined) throw new Error(`${file} names no hidden_size: pass dimensions`)
  return size as number
}

async function loadExtractor(directory: string, dtype: TransformersDtype): Promise<FeatureExtractor> {
  // Loaded on demand, so that an application that never uses this embedder never needs the package;
  // and past bundlers, so that one bundling `entity-registry/embedders` does not ship it and ONNX Runtime.
  const transformers = (await import(/* webpackIgnore: true */ /* turbopackIgnore: true */ '@huggingface/transformers').catch((cause: unknown) => {
    // The cause's message tells a package not installed from one that is but fails to load (ONNX Runtime's native module).
    const reason = cause instanceof Error ? cause.message : String(cause)
    throw new Error(`createTransformersEmbedder needs the package @huggingface/transformers (version 3), which did not load (${reason}): npm install @huggingface/transformers@3`, { cause })
  })) as unknown as TransformersModule
  const options = { local_files_only: true, dtype, device: 'cpu' } as const
  try {
    // With local_files_only, a model is read from its directory and never downloaded. Since 3.4 an
    // absolute path is read as it is; before, under env.localModelPath, which is pointed at the
    // model's parent directory while the model loads (files are read then only), then restored.
    const { env } = transformers
    if (!/^3\.[0-3]\./.test(env.version)) return await transformers.pipeline('feature-extraction', directory, options)
    const localModelPath = env.localModelPath
    env.localModelPath = dirname(directory)
    try {
      return await transformers.pipeline('feature-extraction', basename(directory), options)
    } finally {
      env.localModelPath = localModelPath
    }
  } catch (cause) {
    throw new Error(`cannot load the model in ${directory}: ${(cause as Error).message}`, { cause })
  }
}

function unitLength(vector: Float32Array): Float32Array {
  let norm = 0
  for (const value of vector) norm += value * value
  norm = Math.sqrt(norm)
  if (norm > 0) for (let index = 0; index < vector.length; index++) vector[index]! /= norm
  return vector
}
