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
    return this.byKey.get(keyAt(gram, 0))
  }

  add(slot: number, text: string): void {
    for (const key of distinctKeysOf(text)) {
      let holders = this.byKey.get(key)
      if (holders === undefined) this.byKey.set(key, (holders = { documents: growableUint32(), holders: 0 }))
      holders.documents.push(slot)
      holders.holders++
    }
  }

  trim(): void {
    for (const holders of this.byKey.values()) holders.documents.trim()
  }

  remove(text: string): void {
    for (const key of distinctKeysOf(text)) this.byKey.get(key)!.holders--
  }
}

const seen = new Set<number>()

function distinctKeysOf(text: string): number[] {
  seen.clear()
  for (let at = 0; at + 3 <= text.length; at++) seen.add(keyAt(text, at))
  return [...seen]
}

/** The trigram at `at` as a number: 21 bits for ASCII (a small integer), else the three units in 48 bits. */
function keyAt(text: string, at: number): number {
  const a = text.charCodeAt(at)
  const b = text.charCodeAt(at + 1)
  const c = text.charCodeAt(at + 2)
  return (a | b | c) < 128 ? (a << 14) | (b << 7) | c : 2 ** 21 + a * 2 ** 32 + b * 2 ** 16 + c
}
