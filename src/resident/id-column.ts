import { growableUint16, growableUint32, stringOfUnits } from './growable.js'

/** `table`'s empty place (it holds slots plus one). */
const EMPTY = 0

/**
 * The documents' ids by slot, as UTF-16 units one slot after another (slot s's from `starts[s]` to
 * `starts[s + 1]`), and an open-addressing table from an id to the slots that took it. At 1,000,000
 * entities, the ids as JavaScript strings and a `Map` over them were half of the heap's objects, all
 * of which each major collection of V8 marks (some 200 ms at a time, which a query may wait through);
 * here they are three typed arrays. A slot keeps its id after it dies (an update takes a new slot),
 * until the documents are made again: `lastSlotOf` finds the newest.
 */
export class IdColumn {
  private readonly units = growableUint16()
  private readonly starts = growableUint32()
  /** Slots plus one, by a hash of their ids; at most half full. */
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
    else this.place(slot, hashOf(id))
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
    const mask = this.table.length - 1
    let last = -1
    for (let at = hashOf(id) & mask; this.table[at] !== EMPTY; at = (at + 1) & mask) {
      const slot = this.table[at]! - 1
      if (slot > last && this.holds(slot, id)) last = slot
    }
    return last
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

  private place(slot: number, hash: number): void {
    const mask = this.table.length - 1
    let at = hash & mask
    while (this.table[at] !== EMPTY) at = (at + 1) & mask
    this.table[at] = slot + 1
  }

  private rehash(least: number): void {
    let size = this.table.length
    while (size < least) size *= 2
    this.table = new Uint32Array(size)
    // Each id a string again for a moment: the table grows by doubling, a load reserves it once.
    for (let slot = 0; slot < this.length; slot++) this.place(slot, hashOf(this.at(slot)))
  }
}

/** FNV-1a over an id's UTF-16 units. */
function hashOf(id: string): number {
  let hash = 2166136261
  for (let at = 0; at < id.length; at++) hash = Math.imul(hash ^ id.charCodeAt(at), 16777619)
  return hash >>> 0
}
