/** `entity-registry/embedders`: the embedders search can use. */
export { createWordVectorEmbedder } from './word-vector-embedder.js'
export { createNoEmbedder } from './no-embedder.js'
export { createOpenAiEmbedder, type OpenAiEmbedderOptions } from './openai-embedder.js'
export { createTransformersEmbedder, type TransformersDtype, type TransformersEmbedderOptions } from './transformers-embedder.js'
export type { Embedder } from '../ports/embedder.js'
