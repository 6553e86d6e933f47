import { type Growable, growableUint32, PackedLists, setBit } from './growable.js'

/** The documents whose names' text holds one trigram, and how many live ones do. */
export interface GramHolders {
  documents: Growable<Uint32Array>
  holders: number
}

/**
 * Trigram postings over the names' joined text, keyed by a number made of the trigram's three
 * UTF-16 units (a small integer for ASCII), so that loading a million names makes no string per
 * trigram. Each trigram counts once a document.
 */
export class GramPostings {
  private readonly byKey = new Map<number, GramHolders>()

  /** The postings of the trigram `gram` (3 UTF-16 units), if any document held it. */
  of(gram: string): GramHolders | undefined {
    return this.byKey.get(gramKeyAt(gram, 0))
  }

  /** Adds the trigrams of `slot`'s names' text; returns whether it holds one more than once. */
  add(slot: number, text: string): boolean {
    const distinct = distinctKeysOf(text)
    for (const key of distinct) {
      let holders = this.byKey.get(key)
      if (holders === undefined) this.byKey.set(key, (holders = { documents: growableUint32(), holders: 0 }))
      holders.documents.push(slot)
      holders.holders++
    }
    return distinct.length < Math.max(0, text.length - 2)
  }

  /**
   * The slots (dead ones too) whose names hold every one of `grams`, ascending, into `into` (emptied
   * first): the rarest trigram's postings intersected with the others', each other searched from
   * where it was left by doubling steps, so that a long list costs a few steps a slot.
   */
  holdingAll(grams: readonly string[], into: Growable<Uint32Array>): void {
    into.length = 0
    const lists = grams.map((gram) => this.of(gram)?.documents)
    if (lists.length === 0 || !lists.every((list) => list !== undefined)) return
    lists.sort((a, b) => a.length - b.length)
    const [rarest, ...others] = lists
    const from = others.map(() => 0)
    next: for (let at = 0; at < rarest!.length; at++) {
      const slot = rarest!.values[at]!
      for (let other = 0; other < others.length; other++) {
        const list = others[other]!
        const found = (from[other] = firstAtLeast(list.values, list.length, from[other]!, slot))
        if (found === list.length) return
        if (list.values[found] !== slot) continue next
      }
      into.push(slot)
    }
  }

  /**
   * Makes the postings at once (`PackedLists`) from the names' text of each slot `alive` marks, as
   * UTF-16 units (slot s's from `starts[s]` to `starts[s + 1]`), for postings still empty (a load);
   * marks in `repeated` (a bit a slot) those whose text holds a trigram more than once.
   */
  index(units: Uint16Array, starts: Uint32Array, alive: Uint8Array, slots: number, repeated: Uint32Array): void {
    const listOf = new Map<number, number>()
    const sizes = growableUint32()
    for (let slot = 0; slot < slots; slot++) {
      if (alive[slot] !== 1) continue
      const distinct = distinctKeysAmong(units, starts[slot]!, starts[slot + 1]!)
      if (distinct.length < starts[slot + 1]! - starts[slot]! - 2) setBit(repeated, slot)
      for (const key of distinct) {
        let list = listOf.get(key)
        if (list === undefined) {
          listOf.set(key, (list = sizes.length))
          sizes.push(0)
        }
        sizes.values[list]!++
      }
    }
    const packed = new PackedLists(sizes.values.subarray(0, sizes.length))
    const documents = new Uint32Array(packed.total)
    for (let slot = 0; slot < slots; slot++) {
      if (alive[slot] !== 1) continue
      for (const key of distinctKeysAmong(units, starts[slot]!, starts[slot + 1]!)) documents[packed.next(listOf.get(key)!)] = slot
    }
    for (const [key, list] of listOf) this.byKey.set(key, { documents: growableUint32(packed.of(documents, list)), holders: sizes.values[list]! })
  }

  remove(text: string): void {
    for (const key of distinctKeysOf(text)) this.byKey.get(key)!.holders--
  }
}

/** The first position from `from` on whose value is `wanted` or more (`length` if none): steps doubling, then halving. */
function firstAtLeast(values: Uint32Array, length: number, from: number, wanted: number): number {
  if (from >= length || values[from]! >= wanted) return from
  // values[low] < wanted throughout; values[high] >= wanted, or high = length.
  let low = from
  let step = 1
  let high = from + 1
  while (high < length && values[high]! < wanted) {
    low = high
    step *= 2
    high = low + step
  }
  high = Math.min(high, length)
  while (high - low > 1) {
    const middle = (low + high) >>> 1
    if (values[middle]! < wanted) low = middle
    else high = middle
  }
  return high
}

/** Scratch for `distinctKeysAmong`: a text of n units has n - 2 trigrams. */
let keys = new Float64Array(256)

/** The distinct trigrams of `text`, ascending (a view of scratch that the next call overwrites). */
function distinctKeysOf(text: string): Float64Array {
  const units = new Uint16Array(text.length)
  for (let at = 0; at < text.length; at++) units[at] = text.charCodeAt(at)
  return distinctKeysAmong(units, 0, units.length)
}

/**
 * The distinct trigrams of the units `from` to `to`, ascending (a view of scratch that the next call
 * overwrites): sorted in place, where a set made anew for each of a load's million names was some
 * 500 MB of garbage for the collector.
 */
function distinctKeysAmong(units: Uint16Array, from: number, to: number): Float64Array {
  const count = Math.max(0, to - from - 2)
  if (keys.length < count) keys = new Float64Array(count * 2)
  for (let at = 0; at < count; at++) keys[at] = gramKeyOf(units[from + at]!, units[from + at + 1]!, units[from + at + 2]!)
  const sorted = keys.subarray(0, count).sort()
  let distinct = 0
  for (let at = 0; at < count; at++) if (at === 0 || sorted[at] !== sorted[at - 1]) sorted[distinct++] = sorted[at]!
  return sorted.subarray(0, distinct)
}

/** The trigram at `at` as a number: 21 bits for ASCII (a small integer), else the three units in 48 bits. */
export function gramKeyAt(text: string, at: number): number {
  return gramKeyOf(text.charCodeAt(at), text.charCodeAt(at + 1), text.charCodeAt(at + 2))
}

/** The trigram of the UTF-16 units `a`, `b`, `c` as a number (`gramKeyAt`). */
export function gramKeyOf(a: number, b: number, c: number): number {
  return (a | b | c) < 128 ? (a << 14) | (b << 7) | c : 2 ** 21 + a * 2 ** 32 + b * 2 ** 16 + c
}
