import type { ScoredHit, TextHit } from '../ports/search-index.js'

/**
 * Full text over entities and over their passages, as one ranking of entities: each entity at the
 * better of its rank among entities and its best passage's rank among passages' entities (BM25
 * scores of the two are not comparable: their statistics differ), an entity's own rank first on a
 * tie; it matched as many words as the better of the two matched. Entities with no passage rank as
 * they would alone, except for the passages' entities placed among them.
 */
export function withPassageText(entities: readonly TextHit[], passages: readonly TextHit[], limit: number): TextHit[] {
  const best = new Map<string, { hit: TextHit; rank: number; side: number }>()
  const consider = (hits: readonly TextHit[], side: number) => {
    let rank = 0
    for (const hit of hits) {
      const known = best.get(hit.id)
      if (known?.side === side) continue
      if (known === undefined) best.set(hit.id, { hit, rank, side })
      else best.set(hit.id, { hit: { ...known.hit, matched: Math.max(known.hit.matched, hit.matched) }, rank: Math.min(known.rank, rank), side })
      rank++
    }
  }
  consider(entities, 0)
  consider(passages, 1)
  return [...best.values()]
    .map((entry, order) => ({ ...entry, order }))
    .sort((a, b) => a.rank - b.rank || a.order - b.order)
    .slice(0, limit)
    .map((entry) => entry.hit)
}

/** Nearest entities and passages as one ranking of entities: each at its best similarity (cosine, comparable). */
export function withPassageVectors(entities: readonly ScoredHit[], passages: readonly ScoredHit[], limit: number): ScoredHit[] {
  const best = new Map<string, number>()
  for (const { id, score } of [...entities, ...passages]) best.set(id, Math.max(score, best.get(id) ?? -Infinity))
  return [...best.entries()]
    .map(([id, score]) => ({ id, score }))
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
    .slice(0, limit)
}
