export type QueryKind = 'exact' | 'paraphrase' | 'names' | 'qualifiers' | 'concepts' | 'texts' | 'none'

export interface RelevanceQuery {
  q: string
  kind: QueryKind
  /** Graded judgements: 2 what the query asks for, 1 a fair answer; an entity not listed is 0. Empty for `none`. */
  relevant: Record<string, 1 | 2>
  /** The query shares no word (nor stem) with its targets' indexed text. */
  heldBack?: boolean
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
