/** Turns texts into vectors for the semantic side of search. */
export interface Embedder {
  /** Names the model and its settings: an index built by another embedder id must be rebuilt. */
  readonly id: string
  readonly dimensions: number
  /** One vector per text, in order, of unit length (or all zeros for a text with nothing to embed). */
  embed(texts: string[]): Promise<Float32Array[]>
}
