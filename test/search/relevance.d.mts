export type QueryKind = 'exact' | 'paraphrase' | 'names' | 'qualifiers' | 'concepts' | 'texts' | 'none'

export interface RelevanceQuery {
  q: string
  kind: QueryKind
  /** Graded judgements: 2 what the query asks for, 1 a fair answer; an entity not listed is 0. Empty for `none`. */
  relevant: Record<string, 1 | 2>
  /** Tuned on (`dev`) or only reported on (`held-out`); a query of a file without parts is held out. */
  part: 'dev' | 'held-out'
  /** The query shares no word (nor stem) with its targets' indexed text. */
  heldBack?: boolean
  /** What a paraphrase of the third set asks for: a person, a committee or a bill. */
  target?: 'person' | 'committee' | 'bill'
}

/** Means over the queries that have an answer; `results` over those that have none (null where there are none of that sort). */
export interface Quality {
  queries: number
  ndcg10: number | null
  recall10: number | null
  mrr: number | null
  /** Queries with a relevant entity in their top 5. */
  top5: number
  /** Mean result count of the queries with no answer. */
  results: number | null
}

export const RELEVANCE_SET: RelevanceQuery[]
export const KINDS: QueryKind[]
export function judge(query: RelevanceQuery, ranking: string[]): { results: number; ndcg10?: number; recall10?: number; rr?: number; top5?: boolean }
export function measure(queries: RelevanceQuery[], rank: (q: string) => Promise<string[]>): Promise<Quality>
export function measureByKind(queries: RelevanceQuery[], rank: (q: string) => Promise<string[]>): Promise<Record<QueryKind | 'all', Quality>>
export const PARTS: ('dev' | 'held-out')[]
export function readRelevanceSet(file: string | URL): RelevanceQuery[]
export function seededRandom(seed: number): () => number
export function bootstrapInterval(values: number[], options?: { resamples?: number; seed?: number }): [number, number] | null
export function pairedDifference(before: number[], after: number[], options?: { resamples?: number; seed?: number }): { mean: number; interval: [number, number] | null; verdict: 'up' | 'down' | 'noise' }
