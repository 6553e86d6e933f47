import type { ContractField } from '../contract/fields.js'
import type { Qualifier } from '../gffs/types.js'

/** One canonical entity as the index keeps it. */
export interface IndexedEntity {
  id: string
  /** The contract fields, for prefilters (qualifiers). */
  fields: Partial<Record<ContractField, string>>
  /** The full-text side: tokens as `tokenize` makes them (lowercase, stemmed), in order. */
  tokens: string[]
  /** The semantic side: the embedding of the descriptive fields. */
  vector: Float32Array
}

/** What the index has applied: the feed position and the embedder its vectors come from. */
export interface IndexState {
  cursor: string | null
  embedderId: string | null
}

/**
 * A search index: kept by the indexer from the store's change feed (never written to directly),
 * read by the search endpoint. Both rankings take the prefilter `qualifiers`, with exactly the
 * semantics of list filters, and return ids best first.
 */
export interface SearchIndex {
  state(): Promise<IndexState>
  /** Upserts and removes, then records the feed position, as one step. */
  apply(change: { upserts: IndexedEntity[]; removals: string[]; state: IndexState }): Promise<void>
  /** BM25 over the tokens: every term must match (a phrase: its tokens in a row). */
  fullText(terms: string[][], qualifiers: readonly Qualifier[], limit: number): Promise<string[]>
  /** Nearest vectors by cosine similarity. */
  nearest(vector: Float32Array, qualifiers: readonly Qualifier[], limit: number): Promise<string[]>
  /** Empties the index (for a rebuild). */
  clear(): Promise<void>
  /** Compacts what writes left behind; the indexer calls it on its policy, not after every write. */
  optimize(): Promise<void>
  close(): Promise<void>
}
