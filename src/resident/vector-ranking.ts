import type { ScoredHit } from '../ports/search-index.js'
import type { Documents } from './documents.js'
import { growableUint32 } from './growable.js'
import type { Prefilter } from './prefilter.js'
import { TopHits } from './top-hits.js'

/** The slots a query's prefilter keeps, kept between queries (ranking is synchronous). */
const allowed = growableUint32()
/**
 * What a prefilter keeps, once counted whole: a search asks it of both rankings (the same prefilter:
 * `createResidentSearchIndex` keeps it until a write), and at 1,000,000 entities counting 20,000 of
 * them cost 5 ms (a test of each slot of the narrowest list, at random in memory).
 */
const keptByPrefilter = new WeakMap<Prefilter, Uint32Array>()
/** What a broad prefilter was found to keep more than, counting: not counted again for as many or fewer (0.5 ms at 60,000). */
const keepsMoreThan = new WeakMap<Prefilter, number>()

/**
 * The live slots a prefilter keeps, for the nearest vectors to be found among them alone
 * (`VectorPartitions.nearestAmong`). Null when the prefilter names no values to start from, or keeps
 * more than `most` (the partitions are scanned for those: `VectorPartitions.nearest`). `lists`: the
 * prefilter's `narrowest()`, when the caller has it already.
 */
export function allowedSlots(documents: Documents, prefilter: Prefilter, most: number, lists = prefilter.narrowest()): Uint32Array | null {
  const known = keptByPrefilter.get(prefilter)
  if (known !== undefined) return known.length > most ? null : known
  if (lists === null || most <= (keepsMoreThan.get(prefilter) ?? -1)) return null
  const alive = documents.alive.values
  allowed.length = 0
  for (const { slots, length } of lists) {
    for (let position = 0; position < length; position++) {
      const slot = slots[position]!
      if (alive[slot] !== 1 || !prefilter.allows(slot)) continue
      if (allowed.length === most) {
        keepsMoreThan.set(prefilter, Math.max(most, keepsMoreThan.get(prefilter) ?? 0))
        return null
      }
      allowed.push(slot)
    }
  }
  const kept = allowed.values.slice(0, allowed.length)
  keptByPrefilter.set(prefilter, kept)
  return kept
}

/**
 * The `limit` nearest of `slots`, best first (then by id): a dot product of each slot's Int8
 * components with the query at unit length, times the slot's scale (the cosine).
 */
export function exactHits(documents: Documents, unit: Float32Array, slots: ArrayLike<number>, limit: number): ScoredHit[] {
  const { dimensions } = documents
  const scales = documents.vectorScales.values
  const top = new TopHits(limit, documents.ids)
  for (let position = 0; position < slots.length; position++) {
    const slot = slots[position]!
    const components = documents.vectorOf(slot)
    let sum = 0
    for (let at = 0; at < dimensions; at++) sum += unit[at]! * components[at]!
    top.offer(slot, sum * scales[slot]!)
  }
  return top.hits().map(({ id, score }) => ({ id, score })).sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
}

export function unitOf(vector: Float32Array, dimensions: number): Float32Array {
  let norm = 0
  for (let at = 0; at < dimensions; at++) norm += vector[at]! * vector[at]!
  const unit = new Float32Array(dimensions)
  if (norm === 0) return unit
  const scale = 1 / Math.sqrt(norm)
  for (let at = 0; at < dimensions; at++) unit[at] = vector[at]! * scale
  return unit
}
