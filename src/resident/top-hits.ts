import type { TextHit } from '../ports/search-index.js'
import type { IdColumn } from './id-column.js'

/**
 * The best `limit` slots seen, by score and then id (`bestFirst`): a binary heap whose root is the
 * worst kept, so that a slot below it costs one comparison.
 */
export class TopHits {
  private readonly slots: number[] = []
  private readonly scores: number[] = []
  private readonly matched: number[] = []

  constructor(
    private readonly limit: number,
    private readonly ids: IdColumn,
  ) {}

  offer(slot: number, score: number, matched = 0): void {
    if (this.limit <= 0) return
    if (this.slots.length < this.limit) {
      this.slots.push(slot)
      this.scores.push(score)
      this.matched.push(matched)
      this.up(this.slots.length - 1)
      return
    }
    if (!this.better(score, slot, this.scores[0]!, this.slots[0]!)) return
    this.slots[0] = slot
    this.scores[0] = score
    this.matched[0] = matched
    this.down(0)
  }

  /** How many are kept. */
  get size(): number {
    return this.slots.length
  }

  /** The score a slot must reach to be kept (one equal to it is kept by its id), -Infinity until `limit` are. */
  floor(): number {
    return this.slots.length < this.limit ? -Infinity : this.scores[0]!
  }

  /** The slots kept, in no order. */
  keptSlots(): readonly number[] {
    return this.slots
  }

  /** What was kept, in no order. */
  hits(): TextHit[] {
    return this.slots.map((slot, at) => ({ id: this.ids.at(slot), score: this.scores[at]!, matched: this.matched[at]! }))
  }

  /** Whether (score, slot) ranks before (otherScore, otherSlot). */
  private better(score: number, slot: number, otherScore: number, otherSlot: number): boolean {
    return score > otherScore || (score === otherScore && this.ids.compare(slot, otherSlot) < 0)
  }

  private up(at: number): void {
    while (at > 0) {
      const parent = (at - 1) >> 1
      if (!this.better(this.scores[parent]!, this.slots[parent]!, this.scores[at]!, this.slots[at]!)) break
      this.swap(at, parent)
      at = parent
    }
  }

  private down(at: number): void {
    for (;;) {
      const left = 2 * at + 1
      const right = left + 1
      let worst = at
      if (left < this.slots.length && this.better(this.scores[worst]!, this.slots[worst]!, this.scores[left]!, this.slots[left]!)) worst = left
      if (right < this.slots.length && this.better(this.scores[worst]!, this.slots[worst]!, this.scores[right]!, this.slots[right]!)) worst = right
      if (worst === at) return
      this.swap(at, worst)
      at = worst
    }
  }

  private swap(a: number, b: number): void {
    for (const column of [this.slots, this.scores, this.matched]) [column[a], column[b]] = [column[b]!, column[a]!]
  }
}

/**
 * The `rank`-th largest of `values[0 .. length]` (1: the largest), by quickselect; the values are
 * reordered. -Infinity when there are fewer than `rank` (or `rank` is below 1).
 */
export function rankedValue(values: Float64Array, length: number, rank: number): number {
  if (rank < 1 || rank > length) return -Infinity
  // The (length - rank)-th smallest: each round splits around a median of three, keeping the side holding it.
  const target = length - rank
  let low = 0
  let high = length - 1
  while (low < high) {
    const middle = (low + high) >>> 1
    const pivot = medianOfThree(values[low]!, values[middle]!, values[high]!)
    let left = low
    let right = high
    while (left <= right) {
      while (values[left]! < pivot) left++
      while (values[right]! > pivot) right--
      if (left <= right) {
        const value = values[left]!
        values[left++] = values[right]!
        values[right--] = value
      }
    }
    // Now values[low .. right] <= pivot <= values[left .. high], and those between equal the pivot.
    if (target <= right) high = right
    else if (target >= left) low = left
    else return pivot
  }
  return values[target]!
}

function medianOfThree(a: number, b: number, c: number): number {
  return a < b ? (b < c ? b : a < c ? c : a) : a < c ? a : b < c ? c : b
}
