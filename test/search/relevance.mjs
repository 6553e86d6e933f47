// Ranking quality over the graded relevance set: nDCG@10, recall@10 and MRR of a ranking function,
// overall and by kind of query, and bootstrap intervals of them. Plain JavaScript, so that the tests
// and `bench/search-relevance.mjs` share it.
import { readFileSync } from 'node:fs'

/**
 * The queries of a relevance set file (`{ queries: [{ q, kind, part?, relevant }] }`). A query
 * without a `part` is held out: a set made apart from the project's is never tuned on.
 */
export function readRelevanceSet(file) {
  return JSON.parse(readFileSync(file, 'utf8')).queries.map((query) => ({ ...query, part: query.part ?? 'held-out' }))
}

export const RELEVANCE_SET = readRelevanceSet(new URL('./relevance-set.json', import.meta.url))

/** The parts of a set: tuned on (`dev`), and only reported on (`held-out`). */
export const PARTS = ['dev', 'held-out']

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

/** A seeded generator of numbers in [0, 1) (mulberry32): the same resamples on every run and engine. */
export function seededRandom(seed) {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * The bootstrap 95% interval of the mean of `values` (one a query): the 2.5th and 97.5th percentiles
 * of the means of `resamples` resamples of as many queries, drawn with replacement (seeded). Null
 * for no values.
 */
export function bootstrapInterval(values, { resamples = 1000, seed = 42 } = {}) {
  if (values.length === 0) return null
  const random = seededRandom(seed)
  const means = []
  for (let round = 0; round < resamples; round++) {
    let sum = 0
    for (let draw = 0; draw < values.length; draw++) sum += values[Math.floor(random() * values.length)]
    means.push(sum / values.length)
  }
  means.sort((a, b) => a - b)
  return [means[Math.floor(0.025 * resamples)], means[Math.ceil(0.975 * resamples) - 1]]
}

/**
 * A paired comparison of per-query figures (`before[i]` and `after[i]` of the same query): the mean
 * difference, its bootstrap 95% interval, and `up`, `down` or `noise` (the interval holds 0).
 */
export function pairedDifference(before, after, options) {
  const differences = after.map((value, index) => value - before[index])
  const mean = differences.length === 0 ? 0 : differences.reduce((sum, value) => sum + value, 0) / differences.length
  const interval = bootstrapInterval(differences, options)
  const verdict = interval === null || (interval[0] <= 0 && interval[1] >= 0) ? 'noise' : interval[0] > 0 ? 'up' : 'down'
  return { mean, interval, verdict }
}
