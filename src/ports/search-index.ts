import type { ContractField } from '../contract/fields.js'
import type { Qualifier } from '../gffs/types.js'

/** One canonical entity as the index keeps it. */
export interface IndexedEntity {
  id: string
  /** The contract fields, for prefilters (qualifiers). */
  fields: Partial<Record<ContractField, string>>
  /** The full-text side: tokens as `tokenize` makes them (lowercase, stemmed), in order. */
  tokens: string[]
  /** The words of its name and local identifier as `nameWords` makes them (lowercase, unstemmed), in order. */
  names: string[]
  /** The semantic side: the embedding of the descriptive fields. */
  vector: Float32Array
  /**
   * Passages of its texts' extracted text, each searched by full text as the entity is (under the
   * entity's fields): the entity ranks by the better of itself and its best passage. None when absent.
   */
  passages?: IndexedPassage[]
  /**
   * Created since the state the index last recorded (its first change in the step is its creation):
   * the index holds nothing of it, unless it is replaying a step it applied in part. An index whose
   * removals cost a scan may skip removing it then (LanceDB's did, and a build of 200,000 spent three
   * quarters of its time removing entities that were not there).
   */
  created?: boolean
}

/**
 * A passage of an entity's texts: its tokens as `tokenize` makes them. Full text matches them exactly
 * (typed words and phrases): no typo allowance and no names (those are matched on the entity). In a
 * long text a word an edit or two from a typed one is another word far more often than a typo
 * (`insurance` would find `ensure`). No vector: the word-vector embedder's vectors of passages made
 * relevance worse (bench/README.md).
 */
export interface IndexedPassage {
  tokens: string[]
}

/** What the index has applied: the feed position, and the embedder and embedded text's recipe its vectors come from (`vectorsIdOf`). */
export interface IndexState {
  cursor: string | null
  embedderId: string | null
}

/** A form of a query word that matches the tokens (or the name words) within `allowance` edits (Levenshtein's: a letter inserted, removed or replaced; 0, the form exactly), as a near match. */
export interface NearForm {
  form: string
  allowance: 0 | 1 | 2
}

/** A typed word of a query, as each side of full text matches it. */
export interface QueryWord {
  /** As `tokenize` makes it: matched against the tokens exactly (an exact match ranks above a near one). */
  token: string
  /**
   * Where its typos are looked for among the tokens (`queryWord` makes them): each form's best near
   * token scores as a near match. The token within `typoAllowance(token)` edits, and the stems of the
   * typed word with two adjacent letters swapped, exactly, where one edit is allowed (`jonhson`:
   * Levenshtein counts a swap as two edits, people make it as one). None for a word matched only as
   * itself.
   */
  near: NearForm[]
  /**
   * Where its typos are looked for among the name words (unstemmed, as `names` is matched): the word
   * as typed, within its allowance. The stemmer may take more from a misspelt word than from the
   * name (`klobucher` stems to `klobuch`, two edits from `klobuchar` where seven letters allow one;
   * `downng` is one edit from Downing, stemmed `down`). None for a word search derives rather than
   * one typed.
   */
  nearNames: NearForm[]
  /**
   * As `nameWords` makes it, with the other forms of a given name (its nicknames): matched against
   * the name words whole, weighted above the other fields.
   */
  names: string[]
  /**
   * The names also matched by their parts: a name word holding all of one's trigrams matches it
   * (`klobu` finds Klobuchar), and each trigram shared scores. The name as typed, of 3 letters or
   * more: a given name's other forms are whole names, matched whole (`eli`, a form of `elias`, is
   * no part of every Elizabeth's and Cornelius's name).
   */
  nameParts: string[]
}

/** What full-text search looks for; at least one word or phrase. */
export interface TextQuery {
  /** Any may match, the more the better (BM25). */
  words: QueryWord[]
  /** Phrases, as tokens: each must match, its tokens in a row. */
  phrases: string[][]
}

/** One ranking's hit. Scores are each ranking's own: BM25 on one side, cosine similarity on the other. */
export interface ScoredHit {
  id: string
  score: number
}

/** A full-text hit, with how many of the query's words it matched (`matchesWord`). */
export interface TextHit extends ScoredHit {
  matched: number
  /** Matched in its texts' passages only, not in its own fields: search weighs it less (`fuse`). */
  inTextsOnly?: boolean
  /** Of `matched`, the words its own fields matched, when its passages matched more (`withPassageText`). */
  matchedInFields?: number
}

/** A batch of `SearchIndex.scan`. */
export interface ScannedBatch {
  entities: IndexedEntity[]
  /** Entities (of this batch or any other) that have passages. */
  withPassages: string[]
  /** On the first batch, where the index knows it: how many entities the whole scan brings (an index in front makes room for them at once). */
  total?: number
  /**
   * Asked for (`ScanOptions.passagesUpTo`) and no more than that many in the index: the passages
   * of the entities in `withPassages`, each entity's together (in this batch or any other).
   */
  passages?: { id: string; passages: IndexedPassage[] }[]
}

export interface ScanOptions {
  /** The passages' tokens too (`ScannedBatch.passages`), where the index holds no more passages than this. */
  passagesUpTo?: number
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
  /** BM25 over the indexed text, best first (see `TextQuery`). */
  fullText(query: TextQuery, qualifiers: readonly Qualifier[], limit: number): Promise<TextHit[]>
  /** Nearest vectors by cosine similarity, best first. */
  nearest(vector: Float32Array, qualifiers: readonly Qualifier[], limit: number): Promise<ScoredHit[]>
  /**
   * Whether `fullText` and `nearest` rank in this process now (a call costs CPU here, not a wait on
   * a server or a disk): search then asks for the nearest after full text, and only where they count
   * (a query that names a person needs none). Otherwise, or absent, it asks for both at once.
   */
  readonly ranksInProcess?: boolean
  /** Empties the index (for a rebuild). */
  clear(): Promise<void>
  /**
   * Everything indexed, in batches, for an index that keeps it in memory in front of this one
   * (`createResidentSearchIndex`): the entities without their passages, and the ids of the entities
   * that have passages (their passages too, when few: `ScanOptions`). Optional: an index without it
   * is searched as it is.
   */
  scan?(options?: ScanOptions): AsyncIterable<ScannedBatch>
  /**
   * What the index holds of these entities, their passages included (those it does not hold left
   * out), read where its state is: for an index in front of one that other processes write too (a
   * PostgreSQL index that every instance over the database shares) to take in what they wrote
   * (`ResidentSearchIndex.follow`). Optional.
   */
  entitiesOf?(ids: readonly string[]): Promise<IndexedEntity[]>
  /**
   * Full text over the passages of texts alone (each hit an entity, by its best passages), as
   * `fullText` ranks them before it merges them with the entities' own (`withPassageText`): an index
   * in front that ranks the entities itself asks this one for the passages. Optional.
   */
  passageText?(query: TextQuery, qualifiers: readonly Qualifier[], limit: number): Promise<TextHit[]>
  /** Compacts what writes left behind; the indexer calls it on its policy, not after every write. */
  optimize(): Promise<void>
  close(): Promise<void>
}
