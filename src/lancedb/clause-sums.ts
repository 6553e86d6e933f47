/**
 * A boolean query of clauses that may each match (LanceDB's `BooleanQuery` of `Should`) scores a row
 * by the sum of its clauses' scores. LanceDB 0.39 answers one by scoring every row that any clause
 * matches, with no limit, then summing them all: at 1M rows, a common word in 82,000 titles took 30
 * to 60 ms, where each clause alone, asked for its best rows, takes 1 to 10 ms. So each clause is
 * asked for its best rows; the rows found are the candidates, and each clause that left rows out is
 * asked again for the candidates it did not return, so that every candidate's sum is exact. A row
 * found by no clause scores at most the sum of each clause's last score: when the candidates' `limit`
 * best reach it, they are the query's best (of rows tied at the bound, which ones come in may vary,
 * as from LanceDB); when not, `bestBySum` says so and the boolean query answers.
 */

import { compareCodePoints } from '../gffs/evaluate.js'

/** One clause's best rows: each row's score by id, and the last score returned when rows were left out (null when it returned every row it matches). */
export interface ClauseRanking {
  scores: Map<string, number>
  cutAt: number | null
}

/** Candidates whose score in `clause` is still unknown: found by other clauses, left out by this one. */
export function unscoredIn(clause: ClauseRanking, candidates: Iterable<string>): string[] {
  if (clause.cutAt === null) return []
  return [...candidates].filter((id) => !clause.scores.has(id))
}

/** Float32 scores summed in another order than LanceDB's may differ in their last bits. */
const TOLERANCE = 1e-6

/**
 * The best `limit` ids by the sum of their scores over `clauses`, best first, once every clause that
 * left rows out has scored each candidate (`unscoredIn`: an id it still lacks scores 0 there, as it
 * matched nothing); null when a row that no clause returned could rank among them.
 */
export function bestBySum(clauses: readonly ClauseRanking[], limit: number): { id: string; score: number }[] | null {
  const sums = new Map<string, number>()
  for (const clause of clauses) for (const [id, score] of clause.scores) sums.set(id, (sums.get(id) ?? 0) + score)
  // Ties in id order: the order in which LanceDB returns a clause's tied rows changes from run to run
  // (its threads), and search fuses ranks, so the same query would answer in another order.
  const best = [...sums]
    .map(([id, score]) => ({ id, score }))
    .sort((a, b) => b.score - a.score || compareCodePoints(a.id, b.id))
    .slice(0, limit)
  const unseenAtMost = clauses.reduce((bound, clause) => bound + (clause.cutAt ?? 0), 0)
  if (unseenAtMost === 0) return best
  const last = best.length === limit ? best[limit - 1]!.score : 0
  return last >= unseenAtMost - Math.abs(unseenAtMost) * TOLERANCE ? best : null
}
