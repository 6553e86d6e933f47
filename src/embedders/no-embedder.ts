import type { Embedder } from '../ports/embedder.js'

/**
 * No vectors: search ranks by full text and names alone. For the search index inside a PostgreSQL
 * that has no pgvector (`--embedder none`); its empty vectors leave the semantic side out.
 */
export function createNoEmbedder(): Embedder {
  return { id: 'none', dimensions: 0, embed: async (texts) => texts.map(() => new Float32Array(0)) }
}
