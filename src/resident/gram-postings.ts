import { type Growable, growableUint32 } from './growable.js'

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

  add(slot: number, text: string): void {
    for (const key of distinctKeysOf(text)) {
      let holders = this.byKey.get(key)
      if (holders === undefined) this.byKey.set(key, (holders = { documents: growableUint32(), holders: 0 }))
      holders.documents.push(slot)
      holders.holders++
    }
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

  trim(): void {
    for (const holders of this.byKey.values()) holders.documents.trim()
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

const seen = new Set<number>()

function distinctKeysOf(text: string): number[] {
  seen.clear()
  for (let at = 0; at + 3 <= text.length; at++) seen.add(gramKeyAt(text, at))
  return [...seen]
}

/** The trigram at `at` as a number: 21 bits for ASCII (a small integer), else the three units in 48 bits. */
export function gramKeyAt(text: string, at: number): number {
  return gramKeyOf(text.charCodeAt(at), text.charCodeAt(at + 1), text.charCodeAt(at + 2))
}

/** The trigram of the UTF-16 units `a`, `b`, `c` as a number (`gramKeyAt`). */
export function gramKeyOf(a: number, b: number, c: number): number {
  return (a | b | c) < 128 ? (a << 14) | (b << 7) | c : 2 ** 21 + a * 2 ** 32 + b * 2 ** 16 + c
}
