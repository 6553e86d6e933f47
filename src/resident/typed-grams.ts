import { bm25, type FieldStatistics, idf } from '../search/bm25.js'
import { MATCH_WEIGHTS, trigramsOf } from '../search/text.js'
import { gramKeyAt, gramKeyOf } from './gram-postings.js'
import { setBit } from './growable.js'

/** Names up to this many trigrams long have `TypedGrams.mostAdded` worked out once a query (longer ones, rare, each time). */
const MEMO_LENGTHS = 128

/** Trigram keys of ASCII units are below 2 ** 21 (`gramKeyAt`): one bit each says whether a query typed it. */
const ASCII_KEYS = 2 ** 21
const typedAsciiKeys = new Uint32Array(ASCII_KEYS / 32)

/**
 * The trigrams of a query's typed names, each form's distinct ones, as `textScorer` adds them (a
 * trigram of two forms twice), and their scores in a document's names. A document's names are read
 * once, a trigram at a time, each looked up among the typed ones (a bit for ASCII, then a small hash table),
 * rather than searched once for each typed trigram: a name query of a given name with its nickname
 * forms types 20 to 40 trigrams, and scores them on tens of thousands of persons.
 */
export class TypedGrams {
  /** The typed trigrams in the order they were first typed: the order their scores are added in. */
  readonly grams: string[] = []
  private readonly times: number[] = []
  private readonly weights: number[] = []
  /** Open addressing over the typed trigrams' keys: a key at `slotOf(key)` or after it, its number beside it (-1: empty). */
  private readonly table: Float64Array
  private readonly numbers: Int32Array
  private readonly mask: number
  /** Per typed trigram, its occurrences in the names being scored (zeroed after each). */
  private readonly counts: Uint32Array
  private readonly held: number[] = []
  private readonly keys: number[]
  /** The typed trigrams' weights (`weightOf`), largest first, and `weightsOfHeld[n]` the sum of the first `n`. */
  private readonly largestWeights: number[]
  private readonly weightsOfHeld: number[] = [0]
  /** `mostAdded` of names up to `MEMO_LENGTHS` trigrams long, worked out once a query (NaN until then). */
  private readonly mostAddedOf = new Float64Array(MEMO_LENGTHS).fill(Number.NaN)

  constructor(
    names: Iterable<string>,
    private readonly field: FieldStatistics,
  ) {
    const numberOf = new Map<number, number>()
    for (const name of names) {
      if (name.length < 3) continue
      for (const gram of new Set(trigramsOf(name))) {
        const key = gramKeyAt(gram, 0)
        const known = numberOf.get(key)
        if (known !== undefined) {
          this.times[known]!++
          continue
        }
        numberOf.set(key, this.grams.length)
        this.grams.push(gram)
        this.times.push(1)
        this.weights.push(idf(field, field.holders(gram)))
      }
    }
    this.keys = [...numberOf.keys()]
    this.largestWeights = this.grams.map((_, number) => this.weightOf(number)).sort((a, b) => b - a)
    for (const weight of this.largestWeights) this.weightsOfHeld.push(this.weightsOfHeld.at(-1)! + weight)
    this.counts = new Uint32Array(this.grams.length)
    // A quarter full at most, so that a probe ends in one or two steps.
    const size = 2 ** Math.ceil(Math.log2(4 * Math.max(1, this.grams.length)))
    this.mask = size - 1
    this.table = new Float64Array(size)
    this.numbers = new Int32Array(size).fill(-1)
    for (const [key, number] of numberOf) {
      let at = this.slotOf(key)
      while (this.numbers[at] !== -1) at = (at + 1) & this.mask
      this.table[at] = key
      this.numbers[at] = number
    }
  }

  /** The typed trigram `key`'s number, or -1. */
  private numberOf(key: number): number {
    for (let at = this.slotOf(key); ; at = (at + 1) & this.mask) {
      const number = this.numbers[at]!
      if (number === -1 || this.table[at] === key) return number
    }
  }

  private slotOf(key: number): number {
    return ((Math.imul(key | 0, 0x9e3779b1) ^ Math.floor(key / 2 ** 32)) >>> 0) & this.mask
  }

  /** Marks the typed ASCII trigrams' bits; `release` clears them (ranking is synchronous: one query's are set at a time). */
  claim(): void {
    for (const key of this.keys) if (key < ASCII_KEYS) setBit(typedAsciiKeys, key)
  }

  release(): void {
    for (const key of this.keys) if (key < ASCII_KEYS) typedAsciiKeys[key >>> 5] = 0
  }

  /** What the typed trigram numbered `number` weighs in a score (times typed, `nameTrigram`, IDF): its BM25 there is this times f(count). */
  weightOf(number: number): number {
    return this.times[number]! * MATCH_WEIGHTS.nameTrigram * this.weights[number]!
  }

  /**
   * The most `addScores` can add for names of `length` trigrams holding `held` of the typed trigrams,
   * whose weights (`weightOf`) sum to `weights` (in exact arithmetic: a caller allows for rounding).
   * Their counts are at least 1 and sum to at most `length`; a trigram adds its weight times
   * f(count) = count (k1 + 1) / (count + norm), which grows with the count, at most f(length). Past a
   * count of 1, f gains g(extra) = f(1 + extra) - f(1), concave: the held trigrams' extra counts
   * (length - held at most) gain at most `held` times g of their mean, times the largest weight.
   */
  mostAddedHolding(length: number, held: number, weights: number): number {
    const f = (count: number) => bm25(this.field, count, length, 1)
    const largestWeight = Math.min(this.largestWeights[0]!, weights)
    return Math.min(f(1) * weights + largestWeight * held * (f(1 + (length - held) / held) - f(1)), f(length) * weights)
  }

  /** The most `addScores` can add for names of `length` trigrams, whichever of the typed trigrams they hold (`mostAddedHolding` of the heaviest, however many). */
  mostAdded(length: number): number {
    if (length <= 0 || this.grams.length === 0) return 0
    if (length < MEMO_LENGTHS) {
      const known = this.mostAddedOf[length]!
      if (!Number.isNaN(known)) return known
    }
    let most = 0
    for (let held = 1; held <= Math.min(length, this.grams.length); held++) most = Math.max(most, this.mostAddedHolding(length, held, this.weightsOfHeld[held]!))
    if (length < MEMO_LENGTHS) this.mostAddedOf[length] = most
    return most
  }

  /** What the typed trigram numbered `number` adds to the score of names of `length` trigrams holding it `count` times (`addScores` adds each in turn). */
  scoreOf(number: number, count: number, length: number): number {
    return this.times[number]! * MATCH_WEIGHTS.nameTrigram * bm25(this.field, count, length, this.weights[number]!)
  }

  /**
   * `score` with the typed trigrams' scores in a document's joined names (the UTF-16 units
   * `units[start .. end]`) added, one after the other in the order they were typed, as `textScorer`
   * adds them (so that the sum is the same to the last bit). Between `claim` and `release`.
   */
  addScores(score: number, units: Uint16Array, start: number, end: number): number {
    if (end - start < 3) return score
    const { counts, held } = this
    // The last three units as an ASCII key, and which of them were not ASCII (then the key is made whole).
    let key = 0
    let wide = 0
    for (let at = start; at < end; at++) {
      const unit = units[at]!
      key = ((key << 7) | (unit & 0x7f)) & (ASCII_KEYS - 1)
      wide = ((wide << 1) | (unit >= 0x80 ? 1 : 0)) & 0b111
      if (at < start + 2) continue
      if (wide === 0 && (typedAsciiKeys[key >>> 5]! & (1 << (key & 31))) === 0) continue
      const number = this.numberOf(wide === 0 ? key : gramKeyOf(units[at - 2]!, units[at - 1]!, unit))
      if (number !== -1 && counts[number]!++ === 0) held.push(number)
    }
    if (held.length === 0) return score
    sortSmall(held)
    for (const number of held) {
      score += this.scoreOf(number, counts[number]!, end - start - 2)
      counts[number] = 0
    }
    held.length = 0
    return score
  }
}

/** Sorts a few numbers in place, ascending (insertion sort: a names' text holds a few typed trigrams). */
function sortSmall(numbers: number[]): void {
  for (let at = 1; at < numbers.length; at++) {
    const number = numbers[at]!
    let to = at
    for (; to > 0 && numbers[to - 1]! > number; to--) numbers[to] = numbers[to - 1]!
    numbers[to] = number
  }
}
