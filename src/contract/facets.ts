import type { FacetField } from './fields.js'
import type { PublicSnapshot } from './entity.js'
import { compareCodePoints } from '../gffs/evaluate.js'
import type { FacetCounts } from '../ports/entity-store.js'

/**
 * Facet counts of entities given one by one (their public snapshots, already filtered): what a store
 * without a query engine answers `countFacets` with. The memory store uses it; so may yours.
 */
export function tallyFacets(snapshots: Iterable<PublicSnapshot>, fields: readonly FacetField[], limit: number): Omit<FacetCounts, 'feedHead'> {
  const tallies = new Map(fields.map((field) => [field, new Map<string, number>()]))
  let total = 0
  for (const snapshot of snapshots) {
    total++
    for (const [field, tally] of tallies) {
      const value = snapshot[field]
      if (typeof value === 'string') tally.set(value, (tally.get(value) ?? 0) + 1)
    }
  }
  const facets: FacetCounts['facets'] = {}
  for (const [field, tally] of tallies) {
    facets[field] = [...tally]
      .map(([value, count]) => ({ value, count }))
      .sort((a, b) => b.count - a.count || compareCodePoints(a.value, b.value))
      .slice(0, limit)
  }
  return { total, facets }
}
