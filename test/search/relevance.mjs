// Ranking quality over the relevance set: MRR and nDCG@10 of a ranking function. Plain JavaScript,
// so that the tests and `bench/search-relevance.mjs` share it.
import { readFileSync } from 'node:fs'

export const RELEVANCE_SET = JSON.parse(readFileSync(new URL('./relevance-set.json', import.meta.url), 'utf8')).queries

export async function measure(queries, rank) {
  let mrr = 0
  let ndcg = 0
  let top5 = 0
  for (const query of queries) {
    const ranking = await rank(query.q)
    const first = ranking.findIndex((id) => query.relevant.includes(id))
    if (first !== -1) mrr += 1 / (first + 1)
    if (first !== -1 && first < 5) top5++
    const dcg = ranking.slice(0, 10).reduce((sum, id, index) => sum + (query.relevant.includes(id) ? 1 / Math.log2(index + 2) : 0), 0)
    const ideal = query.relevant.slice(0, 10).reduce((sum, _id, index) => sum + 1 / Math.log2(index + 2), 0)
    ndcg += dcg / ideal
  }
  return { mrr: mrr / queries.length, ndcg10: ndcg / queries.length, top5, queries: queries.length }
}
