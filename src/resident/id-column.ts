import { FNV_OFFSET_BASIS, fnvMix } from './fnv-1a.js'
import { growableUint16, growableUint32, stringOfUnits } from './growable.js'

/** `table`'s empty place (it holds slots plus one). */
const EMPTY = 0

/**
 * The documents' ids by slot, as UTF-16 units one slot after another (slot s's from `starts[s]` to
 * `starts[s + 1]`), and an open-addressing table from an id to the newest slot that took it. At
 * 1,000,000 entities, the ids as JavaScript strings and a `Map` over them were half of the heap's
 * objects, all of which each major collection of V8 marks (some 200 ms at a time, which a query may
 * wait through); here they are three typed arrays. A slot keeps its id after it dies (an update takes
 * a new slot, which takes the id's place in the table), until the documents are made again.
 */
export class IdColumn {
  private readonly units = growableUint16()
  private readonly starts = growableUint32()
  /** The newest slot of each id, plus one, by a hash of the id; at most half full (no more ids than slots). */
  private table = new Uint32Array(16)

  constructor() {
    this.starts.push(0)
  }

  /** How many slots have an id. */
  get length(): number {
    return this.starts.length - 1
  }

  /** Room for `count` more ids of about `unitsEach` units. */
  reserve(count: number, unitsEach: number): void {
    this.starts.reserve(count)
    this.units.reserve(count * unitsEach)
    if (2 * (this.length + count) > this.table.length) this.rehash(2 * (this.length + count))
  }

  /** Gives `id` the next slot, and returns it. */
  push(id: string): number {
    const slot = this.length
    for (let at = 0; at < id.length; at++) this.units.push(id.charCodeAt(at))
    this.starts.push(this.units.length)
    if (2 * (slot + 1) > this.table.length) this.rehash(2 * this.table.length)
    else this.place(slot, id)
    return slot
  }

  /** A slot's id, as a string again. */
  at(slot: number): string {
    return stringOfUnits(this.units.values, this.starts.values[slot]!, this.starts.values[slot + 1]!)
  }

  /** Lets the slack of a load's reservation go. */
  trim(): void {
    this.units.trim()
    this.starts.trim()
  }

  /** The newest slot that took `id` (alive or dead: the caller knows), or -1. */
  lastSlotOf(id: string): number {
    return this.table[this.placeOf(id)]! - 1
  }

  /** Negative, zero or positive as slot `a`'s id sorts before, with or after slot `b`'s (as `<` compares strings: by UTF-16 units). */
  compare(a: number, b: number): number {
    const units = this.units.values
    const starts = this.starts.values
    let from = starts[a]!
    let other = starts[b]!
    const end = starts[a + 1]!
    const otherEnd = starts[b + 1]!
    while (from < end && other < otherEnd) {
      const difference = units[from++]! - units[other++]!
      if (difference !== 0) return difference
    }
    return end - from - (otherEnd - other)
  }

  private holds(slot: number, id: string): boolean {
    const start = this.starts.values[slot]!
    if (this.starts.values[slot + 1]! - start !== id.length) return false
    for (let at = 0; at < id.length; at++) if (this.units.values[start + at] !== id.charCodeAt(at)) return false
    return true
  }

  /** Where `id`'s entry is in the table, or the empty place it would take. */
  private placeOf(id: string): number {
    const mask = this.table.length - 1
    let at = hashOf(id) & mask
    while (this.table[at] !== EMPTY && !this.holds(this.table[at]! - 1, id)) at = (at + 1) & mask
    return at
  }

  /** Makes `slot` the newest slot of its `id`. */
  private place(slot: number, id: string): void {
    this.table[this.placeOf(id)] = slot + 1
  }

  private rehash(least: number): void {
    let size = this.table.length
    while (size < least) size *= 2
    this.table = new Uint32Array(size)
    // Each id a string again for a moment: the table grows by doubling, a load reserves it once. In
    // the order they were taken, so that each id's newest slot is the one left.
    for (let slot = 0; slot < this.length; slot++) this.place(slot, this.at(slot))
  }
}

/** FNV-1a over an id's UTF-16 units. */
function hashOf(id: string): number {
  let hash = FNV_OFFSET_BASIS
  for (let at = 0; at < id.length; at++) hash = fnvMix(hash, id.charCodeAt(at))
  return hash >>> 0
}
