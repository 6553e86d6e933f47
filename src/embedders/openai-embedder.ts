import type { Embedder } from '../ports/embedder.js'

export interface OpenAiEmbedderOptions {
  /** The server's base URL, e.g. `https://api.openai.com/v1` or Ollama's `http://127.0.0.1:11434/v1`. */
  url: string
  model: string
  /** Sent as `Authorization: Bearer <apiKey>`; never put into an error message. */
  apiKey?: string
  /** The vectors' size; checked against every answer. */
  dimensions: number
  /** Texts per request (default 64). */
  batchSize?: number
  /** Ask the model for shorter vectors (OpenAI's text-embedding-3 models support it). */
  requestDimensions?: boolean
  fetch?: typeof globalThis.fetch
}

interface EmbeddingsAnswer {
  data?: { index: number; embedding: number[] }[]
}

/**
 * A client of the OpenAI-compatible `POST /v1/embeddings` protocol, which OpenAI, Ollama, vLLM and
 * Hugging Face's TEI all speak. Vectors are normalized to unit length, as search compares cosines.
 */
export function createOpenAiEmbedder(options: OpenAiEmbedderOptions): Embedder {
  const endpoint = `${options.url.replace(/\/+$/, '')}/embeddings`
  const fetchFn = options.fetch ?? ((input, init) => globalThis.fetch(input, init))
  const batchSize = options.batchSize ?? 64
  return {
    id: `openai-compatible:${options.model}@${options.dimensions}`,
    dimensions: options.dimensions,
    async embed(texts) {
      const vectors: Float32Array[] = []
      for (let start = 0; start < texts.length; start += batchSize) {
        const batch = texts.slice(start, start + batchSize)
        const response = await fetchFn(endpoint, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', ...(options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {}) },
          body: JSON.stringify({ model: options.model, input: batch, ...(options.requestDimensions ? { dimensions: options.dimensions } : {}) }),
        })
        if (!response.ok) {
          const detail = (await response.text()).slice(0, 200)
          throw new Error(`the embeddings server ${endpoint} answered ${response.status}: ${detail}`)
        }
        const answer = (await response.json()) as EmbeddingsAnswer
        const rows = [...(answer.data ?? [])].sort((a, b) => a.index - b.index)
        if (rows.length !== batch.length) throw new Error(`the embeddings server returned ${rows.length} vectors for ${batch.length} texts`)
        for (const row of rows) {
          if (row.embedding.length !== options.dimensions) {
            throw new Error(`the embeddings server returned ${row.embedding.length} dimensions, not ${options.dimensions} (model ${options.model})`)
          }
          vectors.push(unitLength(Float32Array.from(row.embedding)))
        }
      }
      return vectors
    },
  }
}

function unitLength(vector: Float32Array): Float32Array {
  const norm = Math.hypot(...vector)
  if (norm > 0) for (let index = 0; index < vector.length; index++) vector[index]! /= norm
  return vector
}
