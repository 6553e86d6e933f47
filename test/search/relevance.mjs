// Ranking quality over the graded relevance set: nDCG@10, recall@10 and MRR of a ranking function,
// overall and by kind of query. Plain JavaScript, so that the tests and `bench/search-relevance.mjs`
// share it.
import { readFileSync } from 'node:fs'

export const RELEVANCE_SET = JSON.parse(readFileSync(new URL('./relevance-set.json', import.meta.url), 'utf8')).queries

/** The kinds of query, in the order reports list them. */
export const KINDS = ['exact', 'paraphrase', 'names', 'qualifiers', 'concepts', 'texts', 'none']

/**
 * One query's figures for a ranking (ids, best first). Gains are 2^grade - 1 (grade 2: what is asked
 * for, 1: a fair answer); a query with nothing relevant (kind `none`) is judged by its result count only.
 */
export function judge(query, ranking) {
  const grade = (id) => query.relevant[id] ?? 0
  const grades = Object.values(query.relevant).sort((a, b) => b - a)
  if (grades.length === 0) return { results: ranking.length }
  const gain = (g) => 2 ** g - 1
  const dcg = ranking.slice(0, 10).reduce((sum, id, index) => sum + gain(grade(id)) / Math.log2(index + 2), 0)
  const ideal = grades.slice(0, 10).reduce((sum, g, index) => sum + gain(g) / Math.log2(index + 2), 0)
  const first = ranking.findIndex((id) => grade(id) > 0)
  return {
    results: ranking.length,
    ndcg10: dcg / ideal,
    recall10: ranking.slice(0, 10).filter((id) => grade(id) > 0).length / grades.length,
    rr: first === -1 ? 0 : 1 / (first + 1),
    top5: first !== -1 && first < 5,
  }
}

/**
 * Means over `queries`: nDCG@10, recall@10, MRR and the count with a relevant entity in the top 5 over
 * the queries that have an answer; `results`, the mean result count of those that have none.
 */
export async function measure(queries, rank) {
  const judged = []
  for (const query of queries) judged.push(judge(query, await rank(query.q)))
  const answerable = judged.filter((figures) => figures.ndcg10 !== undefined)
  const unanswerable = judged.filter((figures) => figures.ndcg10 === undefined)
  const mean = (list, key) => (list.length === 0 ? null : list.reduce((sum, figures) => sum + Number(figures[key]), 0) / list.length)
  return {
    queries: queries.length,
    ndcg10: mean(answerable, 'ndcg10'),
    recall10: mean(answerable, 'recall10'),
    mrr: mean(answerable, 'rr'),
    top5: answerable.filter((figures) => figures.top5).length,
    results: mean(unanswerable, 'results'),
  }
}

/** `measure` for each kind of query, and over all of them (`all`). */
export async function measureByKind(queries, rank) {
  const byKind = { all: await measure(queries, rank) }
  for (const kind of KINDS) byKind[kind] = await measure(queries.filter((query) => query.kind === kind), rank)
  return byKind
}
