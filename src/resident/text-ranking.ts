import type { NearForm, TextHit, TextQuery } from '../ports/search-index.js'
import { bm25, bestFirst, type FieldStatistics, idf } from '../search/bm25.js'
import { containsPhrase, MATCH_WEIGHTS, trigramsOf } from '../search/text.js'
import type { Documents, LiveStatistics } from './documents.js'
import { type Growable, growableUint32, setBit } from './growable.js'
import type { Prefilter } from './prefilter.js'
import { LONG_FIELD, type Term, type TermDictionary } from './term-dictionary.js'
import { rankedValue, TopHits } from './top-hits.js'
import { TypedGrams } from './typed-grams.js'
import { allowedSlots } from './vector-ranking.js'

/** The words a slot's mask counts; its last bit says that the slot matched a word past them (`WIDE_MATCH`). */
const MASKED_WORDS = 31
/** A slot's mask bit saying that its row of `WideBits` holds the words past `MASKED_WORDS` that it matched. */
const WIDE_MATCH = 1 << MASKED_WORDS
/** The 32-bit words of a touched slot's row of `WideBits` at most. */
const MOST_WIDE_WORDS = 16
/**
 * A query's words that are counted here: the first 31 a bit each in a slot's mask, the rest a bit
 * each in its row of `WideBits`. Typed, a query has at most 32 terms; the WordNet relatives of words
 * that no entity holds make more (`doctors` asks 38, `take` 149, a key 209 at most). A query with
 * more goes to the index behind.
 */
export const MOST_RANKED_WORDS = MASKED_WORDS + 32 * MOST_WIDE_WORDS
/** `WideBits.rows` past this many 32-bit words (4 MB) is let go after its query. */
const WIDE_ROWS_KEPT = 1 << 20

/**
 * For a query of more than `MASKED_WORDS` words: each touched slot's row of bits, a bit for each word
 * past them that the slot matched (`stride` 32-bit words a row), at the slot's place in the touched
 * slots (`rowOf`), zeroed as the slot is first touched. Rows for the touched slots alone: a row for
 * every slot would take 4 MB at 1,000,000 slots for each 32 words.
 */
class WideBits {
  rowOf = new Int32Array(0)
  rows = new Uint32Array(0)
  stride = 0

  /** Made ready for a query of `words` words over `slots` slots. */
  begin(slots: number, words: number): void {
    this.stride = Math.ceil((words - MASKED_WORDS) / 32)
    if (this.rowOf.length < slots) this.rowOf = new Int32Array(slots)
  }

  /** Gives `slot` the `at`-th row, zeroed. */
  start(slot: number, at: number): void {
    const { stride } = this
    this.rows = withRoomKept(this.rows, (at + 1) * stride)
    this.rowOf[slot] = at
    this.rows.fill(0, at * stride, (at + 1) * stride)
  }

  /** Sets `bit` of the `word`-th 32-bit word of `slot`'s row (given by `start`). */
  mark(slot: number, word: number, bit: number): void {
    this.rows[this.rowOf[slot]! * this.stride + word]! |= bit
  }

  /** How many words past `MASKED_WORDS` `slot` matched. */
  count(slot: number): number {
    const from = this.rowOf[slot]! * this.stride
    let count = 0
    for (let at = from; at < from + this.stride; at++) count += popcount(this.rows[at]!)
    return count
  }

  /** After a query: rows grown past `WIDE_ROWS_KEPT` let go. */
  end(): void {
    if (this.rows.length > WIDE_ROWS_KEPT) this.rows = new Uint32Array(0)
  }
}

/**
 * How many slots a window of `addSteps` covers: their scratch (scores, masks)
 * stays in the processor's cache while every step adds to it (about half a megabyte), where a step
 * at a time over every slot would fetch a slot's from memory once for each step that lists it: a
 * name's given name is listed by five to eight steps (the token and the name, exact and near, each
 * of its forms).
 */
const WINDOW_SLOTS = 1 << 14
/** A slot's place in its window. */
const IN_WINDOW = WINDOW_SLOTS - 1

/** Per-slot scratch, kept between queries (ranking is synchronous: one query at a time uses it). */
class Scratch {
  scores = new Float64Array(0)
  /** A near step's best score so far for each slot of the window (`addSteps`), at the slot's place in it: small enough to stay in the cache. */
  nearest = new Float64Array(WINDOW_SLOTS)
  masks = new Uint32Array(0)
  /** For a query of more than `MASKED_WORDS` words: the words past them that each touched slot matched. */
  readonly wideBits = new WideBits()
  /**
   * Per slot whose names are to be read, found from the typed trigrams' postings: how many of them it
   * holds, and their weights' sum (zeroed window by window, once copied to `readingHeld`); for a slot
   * scored from the postings (`gramScored`), the count alone, which says whether it is listed yet.
   */
  heldGrams = new Uint16Array(0)
  heldWeights = new Float64Array(0)
  /** `heldGrams` and `heldWeights` of the slots to read, the `at`-th's at `at` (`slotsToReadForGrams`). */
  readingHeld = new Uint16Array(0)
  readingWeights = new Float64Array(0)
  /** Per slot to read, at its place among them: its score plus the most its trigrams could add, or -Infinity where nothing is left to read. */
  readingBounds = new Float64Array(0)
  /** Per slot: 1 where a selective prefilter keeps it, for one query (zeroed after). */
  admitted = new Uint8Array(0)
  /** One bit a slot: a pruned query's candidates (`Pruning`), 125 KB at 1,000,000 slots (cleared by each). */
  candidates = new Uint32Array(0)
  touched = growableUint32()
  nearTouched = growableUint32()
  /** The slots whose names to read (`slotsToReadForGrams`). */
  listed = growableUint32()
  /**
   * The slots whose typed trigrams' scores were added from the trigrams' postings (`slotsToReadForGrams`),
   * and at each one's place among them its score before them and after.
   */
  gramScored = growableUint32()
  gramScoredBefore = new Float64Array(0)
  gramScoredAfter = new Float64Array(0)
  /** The slots whose names hold every trigram of a part of a name, one list for each part a query types (`NamePartHolders`). */
  private readonly namePartHolders: Growable<Uint32Array>[] = []
  /** The matched slots' scores before their trigram scores, for the best `limit`'s least (`rankedValue`, which reorders them). */
  private partialScores = new Float64Array(0)
  /**
   * The touched slots' scores, the `at`-th touched slot's at `at` (`recordTouchedScores`): read at
   * random once, so that the loops over the touched slots that follow read them in a row (a slot's
   * score, at random, is a cache miss; the matched slots of a name query are tens of thousands).
   */
  touchedScores = new Float64Array(0)

  partialScoresFor(count: number): Float64Array {
    return (this.partialScores = withRoomFor(this.partialScores, count))
  }

  readingBoundsFor(count: number): Float64Array {
    return (this.readingBounds = withRoomFor(this.readingBounds, count))
  }

  /**
   * Room in `readingHeld` and `readingWeights` for `count` slots to read (what they held kept). Not
   * `Growable`s: a `Float64Array` one made `Growable.push`, which every hot loop calls, a kind of
   * array slower (a name's full text 14 to 24 ms a query on average, bench/README session 62).
   */
  fitReading(count: number): void {
    this.readingHeld = withRoomKept(this.readingHeld, count)
    this.readingWeights = withRoomKept(this.readingWeights, count)
  }

  /** Room in `gramScoredBefore` and `gramScoredAfter` for `count` slots (what they held kept). */
  fitGramScored(count: number): void {
    this.gramScoredBefore = withRoomKept(this.gramScoredBefore, count)
    this.gramScoredAfter = withRoomKept(this.gramScoredAfter, count)
  }

  /** The `number`-th list of a query's name parts' holders. */
  namePartHoldersAt(number: number): Growable<Uint32Array> {
    while (this.namePartHolders.length <= number) this.namePartHolders.push(growableUint32())
    return this.namePartHolders[number]!
  }

  /** The scores of the touched slots from the `from`-th on, into `touchedScores` (what it held before them kept); returns how many are there. */
  recordTouchedScores(from: number): number {
    const { touched, scores } = this
    if (this.touchedScores.length < touched.length) {
      const grown = new Float64Array(Math.max(touched.length, this.touchedScores.length * 2))
      grown.set(this.touchedScores.subarray(0, from))
      this.touchedScores = grown
    }
    for (let at = from; at < touched.length; at++) this.touchedScores[at] = scores[touched.values[at]!]!
    return touched.length
  }

  fit(slots: number): void {
    if (this.scores.length >= slots) return
    const size = Math.max(slots, this.scores.length * 2)
    this.scores = new Float64Array(size)
    this.masks = new Uint32Array(size)
    this.heldGrams = new Uint16Array(size)
    this.heldWeights = new Float64Array(size)
    this.admitted = new Uint8Array(size)
    this.candidates = new Uint32Array(Math.ceil(size / 32))
  }
}

/** `array`, or when shorter than `count`, a copy of it twice its length at least. */
function withRoomKept<A extends Uint16Array<ArrayBuffer> | Uint32Array<ArrayBuffer> | Float64Array<ArrayBuffer>>(array: A, count: number): A {
  if (array.length >= count) return array
  const grown = new (array.constructor as new (size: number) => A)(Math.max(count, array.length * 2))
  grown.set(array)
  return grown
}

/** `scores`, or when shorter than `count`, a new array twice its length at least (what it held is not kept). */
function withRoomFor(scores: Float64Array<ArrayBuffer>, count: number): Float64Array<ArrayBuffer> {
  return scores.length >= count ? scores : new Float64Array(Math.max(count, scores.length * 2))
}

const scratch = new Scratch()

/**
 * Full text over the resident documents, scored exactly as `textScorer` scores an entity (the memory
 * index's reference), a term at a time: each matching term's postings add its BM25 to the slots that
 * hold it, so a query costs the postings of its terms, not a scan of the documents; a common word's
 * postings, once rarer words' slots are sure to score above all it adds, only for those slots and the
 * named ones (`Pruning`). The typed word's
 * near terms (typos) are found in the dictionary, the names holding all of a typed name's trigrams
 * by intersecting the trigrams' postings. The shared trigrams' scores are added to the slots that
 * matched a word, each slot's names read once for all the typed trigrams (`TypedGrams`), except where
 * a bound on what they could add says the slot cannot be among the best `limit`; and only the slots
 * that can be are offered to the top `limit` (the best `limit` the same, to the last bit of every score).
 */
export function rankText(documents: Documents, query: TextQuery, prefilter: Prefilter | null, limit: number): TextHit[] {
  const slots = documents.ids.length
  scratch.fit(slots)
  const { scores, masks, touched } = scratch
  touched.length = 0
  const wide = query.words.length > MASKED_WORDS ? scratch.wideBits : null
  wide?.begin(slots, query.words.length)
  const tokenField = statisticsOf(documents.tokenStatistics, (term) => documents.tokens.terms.get(term)?.holders ?? 0)
  const nameField = statisticsOf(documents.nameStatistics, (term) => documents.names.terms.get(term)?.holders ?? 0)
  const gramField = statisticsOf(documents.gramStatistics, (gram) => documents.grams.of(gram)?.holders ?? 0)
  const namesUnits = documents.namesUnits.values
  const namesStarts = documents.namesStarts.values
  const typedGrams = new TypedGrams(query.words.flatMap((word) => word.nameParts), gramField)
  const admitted = admittedSlots(documents, prefilter, wordPostings(documents, query))
  const allowed = (slot: number) => admits(admitted, slot)
  typedGrams.claim()
  try {
    // Phrases: every one must be held; the slots that hold them all, with their phrases' scores.
    const phrased = query.phrases.length > 0 ? phraseScores(documents, query.phrases, tokenField, allowed) : null

    const steps = scoringSteps(documents, query, tokenField, nameField)
    const postingsSteps = steps.filter((step): step is PostingsStep => step.kind === 'postings')
    const nameParts = steps.filter((step) => step.kind === 'grams').map((step, number) => namePartHolders(documents, step, number))
    const pruning = phrased === null ? pruningOf(postingsSteps, admitted, documents.namedSlots.values, limit, slots, wide) : null
    addSteps(postingsSteps, nameParts, admitted, pruning, slots, wide)

    // The least score the best `limit` of the matched slots reach: the `limit`-th best of their
    // scores without trigrams (which only add), phrases included. A slot whose score cannot reach it,
    // whatever its names hold, is not one of them.
    const { touchedScores } = scratch
    const least = leastOfBest(touched, touchedScores, phrased, limit)
    let mostByPhrase = 0
    if (phrased !== null) for (const phraseScore of phrased.values()) mostByPhrase = Math.max(mostByPhrase, phraseScore)
    // Whether a slot reaches the least is known before its trigram scores (they are added only to
    // those that reach it): the `at`-th touched slot's score then.
    const reachesLeastAt = (at: number) => touchedScores[at]! + mostByPhrase >= least

    const top = new TopHits(limit, documents.ids)
    const addCandidate = (slot: number, withGrams: boolean) => {
      const mask = masks[slot]!
      const phraseScore = phrased === null ? 0 : phrased.get(slot)
      if (phraseScore === undefined || (mask === 0 && phrased === null)) return
      const score = scores[slot]! + phraseScore
      const matched = popcount(mask & ~WIDE_MATCH) + ((mask & WIDE_MATCH) === 0 ? 0 : wide!.count(slot))
      top.offer(slot, withGrams ? typedGrams.addScores(score, namesUnits, namesStarts[slot]!, namesStarts[slot + 1]!) : score, matched)
    }
    // The typed names' trigrams, scored on the slots that matched a word, each slot's names read once
    // (a slot without names, a bill's, is passed without reading its empty text): first those already
    // reaching the least of the best, then all that reach it offered, so that the top's floor is at
    // least that. Then the rest, whose names are read only when their trigrams could lift them to the floor.
    const reading = slotsToReadForGrams(documents, typedGrams, touched, masks)
    // Found from the trigrams' postings, the slots to read come with the typed trigrams each holds;
    // else they are the touched ones, whose scores before their trigrams' are read in a row.
    const heldKnown = reading !== touched
    const { readingHeld, readingWeights } = scratch
    // Each slot's score, and where its names are, read at random once: the rest's bounds are kept in
    // a row, so that the slots below the floor are passed without reading them again.
    const bounds = scratch.readingBoundsFor(reading.length)
    for (let at = 0; at < reading.length; at++) {
      const slot = reading.values[at]!
      const start = namesStarts[slot]!
      const end = namesStarts[slot + 1]!
      // Its score before its trigrams' (a touched slot's recorded in a row).
      const score = heldKnown ? scores[slot]! : touchedScores[at]!
      bounds[at] = -Infinity
      if (end === start) continue
      if (score + mostByPhrase >= least) scores[slot] = typedGrams.addScores(score, namesUnits, start, end)
      else bounds[at] = score + (heldKnown ? typedGrams.mostAddedHolding(end - start - 2, readingHeld[at]!, readingWeights[at]!) : typedGrams.mostAdded(end - start - 2))
    }
    for (let at = 0; at < touched.length; at++) if (reachesLeastAt(at)) addCandidate(touched.values[at]!, false)
    // The slots whose trigram scores came from the postings and that did not reach the least before
    // them: offered where they reach the floor now (their scores are whole).
    const { gramScored, gramScoredBefore, gramScoredAfter } = scratch
    for (let at = 0; at < gramScored.length; at++) {
      if (gramScoredBefore[at]! + mostByPhrase >= least || gramScoredAfter[at]! + mostByPhrase < top.floor()) continue
      addCandidate(gramScored.values[at]!, false)
    }
    for (let at = 0; at < reading.length; at++) {
      // Below the least, its score has no trigram scores yet.
      const bound = bounds[at]!
      if (bound === -Infinity || ROUNDING_ALLOWANCE * (bound + mostByPhrase) < top.floor()) continue
      const slot = reading.values[at]!
      scores[slot] = typedGrams.addScores(scores[slot]!, namesUnits, namesStarts[slot]!, namesStarts[slot + 1]!)
      addCandidate(slot, false)
    }
    // Slots that hold every phrase and no word still match (their trigram scores added here).
    if (phrased !== null) for (const slot of phrased.keys()) if (masks[slot] === 0 && scores[slot] === 0) addCandidate(slot, true)
    return top.hits().sort(bestFirst)
  } finally {
    typedGrams.release()
    admitted.release()
    for (let at = 0; at < touched.length; at++) {
      const slot = touched.values[at]!
      scores[slot] = 0
      masks[slot] = 0
    }
    wide?.end()
  }
}

/**
 * What a bound on a score is multiplied by before it is compared: the score itself is a sum rounded
 * at each step, in its own order, which may exceed the bound's exact sum in its last bits (by far less).
 */
const ROUNDING_ALLOWANCE = 1 + 1e-9

/**
 * The `limit`-th best of the matched slots' scores so far (plus their phrases' scores; those not
 * holding every phrase left out), or -Infinity when fewer match: as trigram scores only add, at
 * least `limit` slots end at or above it, and a slot ending below it is not among the best `limit`.
 */
function leastOfBest(touched: Growable<Uint32Array>, touchedScores: Float64Array, phrased: Map<number, number> | null, limit: number): number {
  if (touched.length < limit) return -Infinity
  const partial = scratch.partialScoresFor(touched.length)
  if (phrased === null) {
    partial.set(touchedScores.subarray(0, touched.length))
    return rankedValue(partial, touched.length, limit)
  }
  let count = 0
  for (let at = 0; at < touched.length; at++) {
    const phraseScore = phrased.get(touched.values[at]!)
    if (phraseScore !== undefined) partial[count++] = touchedScores[at]! + phraseScore
  }
  return rankedValue(partial, count, limit)
}

/** `addPostings`'s weight for a near term: its BM25 is kept where it is a slot's best so far, not added. */
const KEEP_THE_BEST = -1

/**
 * One step of a query's scores, in the order they are added (the order fixes every score's last
 * bit): the postings of `terms` added at `weight` (one term), or with `KEEP_THE_BEST` the best of
 * several near terms (typos) at `MATCH_WEIGHTS.nearWord`; or the slots whose names hold every
 * trigram of a part of a name, marked as matching the word (their trigram scores come after). The
 * word is `bit` of a slot's mask, or past the first `MASKED_WORDS` `WIDE_MATCH` there and `wideBit`
 * of the `wideWord`-th 32-bit word of its row of `WideBits` (`wideBit` 0 for the first words).
 */
interface WordBits {
  bit: number
  wideWord: number
  wideBit: number
}
type ScoringStep =
  | ({ kind: 'postings'; terms: readonly Term[]; field: FieldStatistics; lengths: Uint32Array; weight: number } & WordBits)
  | ({ kind: 'grams'; name: string } & WordBits)
type PostingsStep = Extract<ScoringStep, { kind: 'postings' }>

function scoringSteps(documents: Documents, query: TextQuery, tokenField: FieldStatistics, nameField: FieldStatistics): ScoringStep[] {
  const tokenLengths = documents.tokenLengths.values
  const nameLengths = documents.nameLengths.values
  const steps: ScoringStep[] = []
  query.words.forEach((word, position) => {
    const past = position - MASKED_WORDS
    const bits: WordBits = past < 0 ? { bit: 1 << position, wideWord: 0, wideBit: 0 } : { bit: WIDE_MATCH, wideWord: past >>> 5, wideBit: 1 << (past & 31) }
    const postings = (terms: readonly Term[], field: FieldStatistics, lengths: Uint32Array, weight: number) => steps.push({ kind: 'postings', terms, field, lengths, weight, ...bits })
    const exact = documents.tokens.terms.get(word.token)
    if (exact !== undefined) postings([exact], tokenField, tokenLengths, MATCH_WEIGHTS.word)
    for (const form of word.near) postings(nearTerms(documents.tokens, form), tokenField, tokenLengths, KEEP_THE_BEST)
    for (const form of word.nearNames) postings(nearTerms(documents.names, form), nameField, nameLengths, KEEP_THE_BEST)
    for (const name of word.names) {
      const term = documents.names.terms.get(name)
      if (term !== undefined) postings([term], nameField, nameLengths, MATCH_WEIGHTS.name)
    }
    // A part of a name: the names holding all its trigrams match the word (their trigram scores come later).
    for (const part of word.nameParts) steps.push({ kind: 'grams', name: part, ...bits })
  })
  return steps
}

/** The slots (ascending, dead ones too) whose names hold every trigram of a part of a name (a `grams` step), to be marked as matching its word; `at`: how many are marked. */
interface NamePartHolders extends WordBits {
  slots: Growable<Uint32Array>
  at: number
}

function namePartHolders(documents: Documents, { name, bit, wideWord, wideBit }: Extract<ScoringStep, { kind: 'grams' }>, number: number): NamePartHolders {
  const slots = scratch.namePartHoldersAt(number)
  documents.grams.holdingAll([...new Set(trigramsOf(name))], slots)
  return { slots, bit, wideWord, wideBit, at: 0 }
}

/**
 * The steps' scores added in their order, over every admitted slot, or with `pruning` over those the
 * pruned steps walk (`Pruning`): window by window of slots (`WINDOW_SLOTS`), every step within a
 * window before the next window, so that each slot's score is added to in the steps' order (which
 * fixes its last bit) as a step at a time would. Postings list their slots in increasing order. In
 * each window too, the admitted holders of `nameParts` are marked as matching their words, and the
 * scores of the slots touched are recorded (`Scratch.recordTouchedScores`), while they are in the cache.
 */
function addSteps(steps: readonly PostingsStep[], nameParts: readonly NamePartHolders[], admitted: AdmittedSlots, pruning: Pruning | null, slots: number, wide: WideBits | null): void {
  const { scores, masks, touched, nearest, nearTouched } = scratch
  let recorded = 0
  const walks = steps.map((step) => ({ step, pruning: pruning?.pruned.has(step) === true ? pruning : null, idfs: step.terms.map((term) => idf(step.field, term.holders)), cursors: step.terms.map(() => 0) }))
  for (let windowEnd = WINDOW_SLOTS; windowEnd < slots + WINDOW_SLOTS; windowEnd += WINDOW_SLOTS) {
    for (const { step, pruning, idfs, cursors } of walks) {
      const { terms, field, lengths, weight } = step
      if (weight !== KEEP_THE_BEST) {
        for (let term = 0; term < terms.length; term++) cursors[term] = addPostings(terms[term]!, idfs[term]!, cursors[term]!, windowEnd, field, lengths, step, admitted, weight, pruning, wide)
        continue
      }
      nearTouched.length = 0
      for (let term = 0; term < terms.length; term++) cursors[term] = addPostings(terms[term]!, idfs[term]!, cursors[term]!, windowEnd, field, lengths, step, admitted, KEEP_THE_BEST, pruning, wide)
      for (let at = 0; at < nearTouched.length; at++) {
        const slot = nearTouched.values[at]!
        scores[slot]! += MATCH_WEIGHTS.nearWord * nearest[slot & IN_WINDOW]!
        nearest[slot & IN_WINDOW] = 0
      }
    }
    for (const part of nameParts) {
      const holders = part.slots.values
      let at = part.at
      for (; at < part.slots.length && holders[at]! < windowEnd; at++) {
        const slot = holders[at]!
        if (!admits(admitted, slot)) continue
        if (masks[slot] === 0 && scores[slot] === 0) {
          wide?.start(slot, touched.length)
          touched.push(slot)
        }
        masks[slot]! |= part.bit
        if (part.wideBit !== 0) wide!.mark(slot, part.wideWord, part.wideBit)
      }
      part.at = at
    }
    recorded = scratch.recordTouchedScores(recorded)
  }
}

/**
 * The most a postings step adds to a slot's score: a term's BM25 grows with its count and falls with
 * the field's length, so its most occurrences at its fewest terms bound it (in exact arithmetic).
 */
function mostAddedBy({ terms, field, weight }: PostingsStep): number {
  let most = 0
  for (const term of terms) most = Math.max(most, bm25(field, term.mostCount, term.leastLength, idf(field, term.holders)))
  return (weight === KEEP_THE_BEST ? MATCH_WEIGHTS.nearWord : weight) * most
}

/**
 * The postings of common words walked for a few slots alone, as MaxScore prunes (Turtle and Flood):
 * once some slots hold `limit` scores above all that the steps in `pruned` can add together, a slot
 * that only those list cannot be among the best `limit`, unless its names' trigrams add to it (their
 * scores are not bounded here). So the pruned steps score only the candidates (`candidates`, a bit a
 * slot: the slots of the other steps) and the slots with names (`named`, a bit a slot); what they list
 * apart is passed over at two bits read from arrays that stay in the processor's cache, where scoring
 * it reads four columns a slot from memory.
 */
interface Pruning {
  pruned: ReadonlySet<ScoringStep>
  candidates: Uint32Array
  named: Uint32Array
}

/**
 * The most postings the smallest steps may hold, as a share of the query's, to find the scores to
 * beat: they are walked twice (once here, in order of size, then in the steps' own order).
 */
const MOST_WALKED_TWICE = 1 / 4
/** Marking a posting's slot as a candidate costs about this share of scoring it. */
const MARKING_COST = 1 / 8

/**
 * How the query's steps are pruned (`Pruning`), or null when they cannot be (nor should be). The
 * smallest steps, up to `MOST_WALKED_TWICE` of the postings, are walked (in this scratch, cleared
 * after); the `limit`-th best of their slots' scores is the score to beat, and the steps left that
 * add least, as many as add less than it together, are pruned. The slots of every other step are
 * candidates: those of the steps walked here, and those of the rest, marked from their postings.
 * Not with phrases, which a slot must all hold (the caller's).
 */
function pruningOf(steps: readonly PostingsStep[], admitted: AdmittedSlots, named: Uint32Array, limit: number, slots: number, wide: WideBits | null): Pruning | null {
  const { scores, masks, touched } = scratch
  const bySize = steps
    .map((step) => ({ step, size: step.terms.reduce((sum, term) => sum + term.documents.length, 0) }))
    .sort((a, b) => a.size - b.size)
  const postings = bySize.reduce((sum, { size }) => sum + size, 0)
  let walked = 0
  let small = 0
  for (; small < bySize.length && walked + bySize[small]!.size <= MOST_WALKED_TWICE * postings; small++) walked += bySize[small]!.size
  if (small === 0 || small === bySize.length) return null
  touched.length = 0
  // The slots' rows of `wide` are given again when the steps are walked in their order (`WideBits.start`).
  addSteps(bySize.slice(0, small).map(({ step }) => step), [], admitted, null, slots, wide)
  const least = leastOfBest(touched, scratch.touchedScores, null, limit)
  const listed = Uint32Array.from(touched.values.subarray(0, touched.length))
  for (const slot of listed) {
    scores[slot] = 0
    masks[slot] = 0
  }
  touched.length = 0
  // The steps left, those that add least first: pruned while all they add together stays below the
  // score to beat (each side's sums are rounded in their own order: the bound is kept clear of both).
  const left = bySize.slice(small).map((entry) => ({ ...entry, mostAdded: mostAddedBy(entry.step) }))
  left.sort((a, b) => a.mostAdded - b.mostAdded)
  let pruned = 0
  for (let mostAdded = 0; pruned < left.length && ROUNDING_ALLOWANCE * (mostAdded + left[pruned]!.mostAdded) < least / ROUNDING_ALLOWANCE; pruned++) mostAdded += left[pruned]!.mostAdded
  const prunedPostings = left.slice(0, pruned).reduce((sum, { size }) => sum + size, 0)
  const marked = left.slice(pruned)
  if (prunedPostings === 0 || prunedPostings < MARKING_COST * marked.reduce((sum, { size }) => sum + size, 0)) return null
  const { candidates } = scratch
  candidates.fill(0)
  for (const slot of listed) setBit(candidates, slot)
  for (const { step } of marked) {
    for (const term of step.terms) {
      const holders = term.documents.values
      for (let at = 0; at < term.documents.length; at++) setBit(candidates, holders[at]!)
    }
  }
  return { pruned: new Set(left.slice(0, pruned).map(({ step }) => step)), candidates, named }
}

/**
 * Each admitted slot holding `term` from its `from`-th posting and below `windowEnd`, marked as
 * matching its word (`WordBits`), given the term's BM25 there (the field's length read beside the posting's
 * count, or for a field of `LONG_FIELD` terms or more from `lengths`, the field's length in each slot):
 * added to its score at `weight`, or with `KEEP_THE_BEST` kept in `nearest` where it is the best so
 * far; with `pruning`, only the slots it walks. Returns where the next window starts. Most of a
 * query's work is this loop: it calls nothing a slot but `bm25` (and a broad prefilter's test).
 */
function addPostings(term: Term, termIdf: number, from: number, windowEnd: number, field: FieldStatistics, lengths: Uint32Array, { bit, wideWord, wideBit }: WordBits, admitted: AdmittedSlots, weight: number, pruning: Pruning | null, wide: WideBits | null): number {
  const { scores, masks, touched, nearest, nearTouched } = scratch
  const { marks, broad } = admitted
  const candidates = pruning?.candidates ?? null
  const named = pruning?.named ?? null
  const holders = term.documents.values
  const occurrences = term.occurrences.values
  const length = term.documents.length
  let at = from
  for (; at < length; at++) {
    const slot = holders[at]!
    if (slot >= windowEnd) break
    if (candidates !== null && ((candidates[slot >>> 5]! | named![slot >>> 5]!) & (1 << (slot & 31))) === 0) continue
    if (marks[slot] !== 1 || (broad !== null && !broad.allows(slot))) continue
    if (masks[slot] === 0 && scores[slot] === 0) {
      if (wide !== null) wide.start(slot, touched.length)
      touched.push(slot)
    }
    masks[slot]! |= bit
    if (wideBit !== 0) wide!.mark(slot, wideWord, wideBit)
    const occurrence = occurrences[at]!
    // Decoded here as `countOf` and `fieldLengthOf` decode it: calls to them in this loop cost a name's full text a tenth more.
    const fieldLength = occurrence >>> 8
    const score = bm25(field, occurrence & 0xff, fieldLength !== LONG_FIELD ? fieldLength : lengths[slot]!, termIdf)
    if (weight !== KEEP_THE_BEST) scores[slot]! += weight * score
    else {
      if (nearest[slot & IN_WINDOW] === 0) nearTouched.push(slot)
      if (score > nearest[slot & IN_WINDOW]!) nearest[slot & IN_WINDOW] = score
    }
  }
  return at
}

/** The held terms of `dictionary` within a near form's allowance of it. */
function nearTerms(dictionary: TermDictionary, { form, allowance }: NearForm): readonly Term[] {
  if (allowance > 0) return dictionary.near(form, allowance)
  const held = dictionary.terms.get(form)
  return held !== undefined && held.holders > 0 ? [held] : []
}

/** Which slots a query may match: those marked 1 in `marks`, and of them those `broad` allows (when not null). */
interface AdmittedSlots {
  marks: Uint8Array
  broad: Prefilter | null
  /** Clears the marks this query set. */
  release(): void
}

/** Whether the query may match `slot` (`addPostings` asks it inline, of the fields it reads once). */
function admits({ marks, broad }: AdmittedSlots, slot: number): boolean {
  return marks[slot] === 1 && (broad === null || broad.allows(slot))
}

/**
 * The slots a query may match as a byte a slot: with no prefilter, the live ones (`alive` itself);
 * with a prefilter whose values list fewer slots than the query's words' postings, the live slots it
 * keeps, marked in scratch (a test of the prefilter each, where the postings would cost one a
 * posting walked); with a broader one, the live ones, the prefilter asked of each posting's slot.
 */
function admittedSlots(documents: Documents, prefilter: Prefilter | null, postings: number): AdmittedSlots {
  const alive = documents.alive.values
  const nothingToClear = () => {}
  if (prefilter === null) return { marks: alive, broad: null, release: nothingToClear }
  const lists = prefilter.narrowest()
  const listed = lists?.reduce((sum, list) => sum + list.length, 0) ?? Infinity
  const kept = listed < postings ? allowedSlots(documents, prefilter, listed, lists) : null
  if (kept === null) return { marks: alive, broad: prefilter, release: nothingToClear }
  const { admitted: marks } = scratch
  for (let at = 0; at < kept.length; at++) marks[kept[at]!] = 1
  // Only the slots marked are cleared (fewer than the postings), not a byte for every slot.
  return {
    marks,
    broad: null,
    release: () => {
      for (let at = 0; at < kept.length; at++) marks[kept[at]!] = 0
    },
  }
}

/** The postings of the query's words and names themselves (near terms not counted): the least its ranking walks. */
function wordPostings(documents: Documents, query: TextQuery): number {
  let postings = 0
  for (const word of query.words) {
    postings += documents.tokens.terms.get(word.token)?.documents.length ?? 0
    for (const name of word.names) postings += documents.names.terms.get(name)?.documents.length ?? 0
  }
  return postings
}

/**
 * A slot's names cost a few hundred nanoseconds to read (its units far in memory: a cache miss), a trigram's posting
 * a few: while the typed trigrams' postings are this many times fewer than the slots that matched,
 * they find the slots worth reading.
 */
const POSTINGS_A_READ = 16

/**
 * The slots that matched (`masks`) whose names may hold a typed trigram, to be read: every one, or
 * when the trigrams' postings are fewer, those they hold. Then the typed trigrams' scores of a slot
 * whose names hold no trigram twice (`Documents.gramsRepeated`) are added here, from the postings and
 * the names' length, in the order `TypedGrams.addScores` adds them (the same sum to the last bit):
 * it is listed in `Scratch.gramScored`, not read. The rest are listed to be read, with (in
 * `readingHeld` and `readingWeights` at each one's place among them) which typed trigrams it holds:
 * their count and weights' sum.
 */
function slotsToReadForGrams(documents: Documents, typedGrams: TypedGrams, touched: Growable<Uint32Array>, masks: Uint32Array): Growable<Uint32Array> {
  const { listed: reading, gramScored, heldGrams, heldWeights, scores } = scratch
  gramScored.length = 0
  const lists = typedGrams.grams.map((gram) => documents.grams.of(gram)?.documents)
  if (lists.reduce((sum, list) => sum + (list?.length ?? 0), 0) >= POSTINGS_A_READ * touched.length) return touched
  reading.length = 0
  let copied = 0
  let scoredCopied = 0
  const repeated = documents.gramsRepeated.values
  const namesStarts = documents.namesStarts.values
  const weights = lists.map((_, number) => typedGrams.weightOf(number))
  const cursors = lists.map(() => 0)
  // Window by window (as `addSteps`): a slot's count, weights and score stay in the cache for every trigram it holds.
  for (let windowEnd = WINDOW_SLOTS; windowEnd < documents.ids.length + WINDOW_SLOTS; windowEnd += WINDOW_SLOTS) {
    lists.forEach((list, number) => {
      if (list === undefined) return
      const weight = weights[number]!
      let at = cursors[number]!
      for (; at < list.length; at++) {
        const slot = list.values[at]!
        if (slot >= windowEnd) break
        if (masks[slot] === 0) continue
        if ((repeated[slot >>> 5]! & (1 << (slot & 31))) === 0) {
          if (heldGrams[slot]!++ === 0) {
            scratch.fitGramScored(gramScored.length + 1)
            scratch.gramScoredBefore[gramScored.length] = scores[slot]!
            gramScored.push(slot)
          }
          scores[slot]! += typedGrams.scoreOf(number, 1, namesStarts[slot + 1]! - namesStarts[slot]! - 2)
          continue
        }
        if (heldGrams[slot]!++ === 0) reading.push(slot)
        heldWeights[slot]! += weight
      }
      cursors[number] = at
    })
    // The window's counts, sums and scores, in the cache still, put in a row beside the slots and cleared.
    scratch.fitReading(reading.length)
    const { readingHeld, readingWeights, gramScoredAfter } = scratch
    for (; copied < reading.length; copied++) {
      const slot = reading.values[copied]!
      readingHeld[copied] = heldGrams[slot]!
      readingWeights[copied] = heldWeights[slot]!
      heldGrams[slot] = 0
      heldWeights[slot] = 0
    }
    for (; scoredCopied < gramScored.length; scoredCopied++) {
      const slot = gramScored.values[scoredCopied]!
      gramScoredAfter[scoredCopied] = scores[slot]!
      heldGrams[slot] = 0
    }
  }
  return reading
}

/** The slots (allowed) holding every phrase, with the sum of the phrases' BM25; each phrase's holders counted over every live slot. */
function phraseScores(documents: Documents, phrases: readonly string[][], tokenField: FieldStatistics, allowed: (slot: number) => boolean): Map<number, number> {
  let result = null as Map<number, number> | null
  for (const phrase of phrases) {
    const terms = phrase.map((token) => documents.tokens.terms.get(token))
    const found = new Map<number, number>()
    if (terms.every((term) => term !== undefined)) {
      // The rarest token's postings hold every slot that can hold the phrase.
      const rarest = terms.reduce((a, b) => (b.documents.length < a.documents.length ? b : a))
      let holders = 0
      const occurrences = new Map<number, number>()
      for (let at = 0; at < rarest.documents.length; at++) {
        const slot = rarest.documents.values[at]!
        if (documents.alive.values[slot] !== 1) continue
        const count = phraseCount(documents.tokensOf(slot), phrase)
        if (count === 0) continue
        holders++
        if (allowed(slot)) occurrences.set(slot, count)
      }
      const phraseIdf = idf(tokenField, holders)
      for (const [slot, count] of occurrences) found.set(slot, bm25(tokenField, count, documents.tokenLength(slot), phraseIdf))
    }
    const previous = result
    result = previous === null ? found : new Map([...found].filter(([slot]) => previous.has(slot)).map(([slot, score]) => [slot, score + previous.get(slot)!]))
  }
  return result ?? new Map()
}

function phraseCount(tokens: readonly string[], phrase: readonly string[]): number {
  let count = 0
  for (let start = 0; start + phrase.length <= tokens.length; start++) if (containsPhrase(tokens.slice(start, start + phrase.length), phrase)) count++
  return count
}

function statisticsOf(live: LiveStatistics, holders: (term: string) => number): FieldStatistics {
  return { count: live.count, averageLength: live.totalLength / Math.max(1, live.count), holders }
}

function popcount(mask: number): number {
  let bits = mask - ((mask >>> 1) & 0x55555555)
  bits = (bits & 0x33333333) + ((bits >>> 2) & 0x33333333)
  return (((bits + (bits >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24
}
