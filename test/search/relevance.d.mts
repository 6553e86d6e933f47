export interface RelevanceQuery {
  q: string
  /** The entities that must rank in the query's top 5. */
  relevant: string[]
  /** The query shares no word (nor stem) with its targets' indexed text. */
  heldBack?: boolean
}

export interface Quality {
  mrr: number
  ndcg10: number
  /** Queries with a relevant entity in their top 5. */
  top5: number
  queries: number
}

export const RELEVANCE_SET: RelevanceQuery[]
export function measure(queries: RelevanceQuery[], rank: (q: string) => Promise<string[]>): Promise<Quality>
