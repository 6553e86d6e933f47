import type { ScoredHit } from '../ports/search-index.js'
import { type Documents, KEPT_FIELDS, type VectorHolder } from './documents.js'
import { type DotProductsAbove, type DotProductsFrom, dotProductsOver } from './dot-products.js'
import { FNV_OFFSET_BASIS, fnvMix } from './fnv-1a.js'
import { MIXED_CODES, type Prefilter } from './prefilter.js'
import { quantizeInto } from './growable.js'
import { TopHits } from './top-hits.js'
import { exactHits, unitOf } from './vector-ranking.js'

/**
 * The share of the live vectors a query scans, the partitions nearest it first. The catalogue's
 * vectors (averages of a title's words) have no tight clusters: a query's nearest ten lie in many
 * partitions, and recall@10 against exact search reaches 0.95 only past a quarter of the vectors
 * (bench/README.md, the resident index). At 1,000,000 vectors that is 30 million Int8
 * multiply-adds, about 3 ms of the SIMD kernel.
 */
export const SCANNED_SHARE = 0.3
/**
 * The share scanned under a prefilter: more, since the nearest it allows may lie further than the
 * nearest, in partitions of vectors it refuses (a type's entities not where the query is).
 */
export const ALLOWED_SHARE = 0.5
/** Positions scored by one call of the kernel. */
const BATCH = 16_384
/** The most bytes of vectors `nearestAmong` keeps gathered (about 16 prefilters keeping 20,000 vectors of 100 components). */
const GATHERED_BYTES = 32 * 1024 * 1024
/** Rounds of k-means, and sample vectors a partition, when the centroids are trained. */
const TRAINING_ROUNDS = 6
const SAMPLE_A_PARTITION = 64
const PAGE = 65_536

/** `nextSharing`'s end of a chain: no further slot shares the vector. */
const NONE = 0xffffffff
/** What a prefilter makes of a position (`verdicts`): not asked yet, refused, its one slot allowed, or its chain's slots to be asked each. */
const UNASKED = 0
const REFUSED = 1
const ALLOWED = 2
const ASK_EACH = 3

/** Partitions of about 4 √n vectors each: √n / 4 of them (at most 1,024), so that assigning n vectors costs n √n / 4 dot products at load. */
const partitionsFor = (vectors: number) => Math.max(1, Math.min(1024, Math.round(Math.sqrt(vectors) / 4)))

/** A prefilter's vectors, gathered in the order they lie in memory (`VectorPartitions.nearestAmong`): their records (components and scale), and slots. */
interface Gathered {
  records: Int8Array
  slots: Uint32Array
}

/** `bytes` rounded up to a multiple of `unit` (a power of two). */
const aligned = (bytes: number, unit: number) => (bytes + unit - 1) & -unit

/**
 * The live vectors of documents in partitions (an inverted file): each vector is copied, as Int8,
 * next to the others of the centroid nearest it, so that a query reads the partitions nearest it
 * as contiguous memory (read by slot at random, the same scan costs ten times as much: cache misses).
 * Centroids are trained by k-means on a sample when the index is loaded, and kept when it is made
 * again (compaction); a vector written later joins its nearest partition, which moves to the end of
 * memory, twice its size, when full. Removed slots stay in their partition, skipped by liveness,
 * until compaction. Candidates are scored with the query in Int8 too, then the best rescored exactly;
 * of candidates tied with the worst kept, the first scanned stays (many entities may share one
 * vector: breaking their ties by id, as exact search does, cost a comparison of ids for each).
 * Slots whose vectors are equal (with the default embedder, the persons of a role whose names no
 * word vector knows: 60% of the catalogue's entities share 12 vectors) share one position, scored
 * once: its slots are chained in the order they were placed (`nextSharing`), and offered in that
 * order, as they were when each had a position of its own.
 * Each vector is a record of its components and, past them, its scale as a Float32 (`stride`
 * bytes in all), so that the kernel scores it whole and hands back only what beats the scan's
 * floor (`DotProductsAbove`). The memory layout: query, what a kernel call writes (the centroids'
 * scores, or the indices and scores of the vectors above the floor), the centroids, the vectors'
 * records, then (for `nearestAmong`) a prefilter's records gathered.
 */
export class VectorPartitions implements VectorHolder {
  private readonly memory: WebAssembly.Memory
  private readonly dotsFrom: DotProductsFrom
  private readonly dotsAbove: DotProductsAbove
  private bytes: Int8Array
  private floats: Float32Array
  private scores: Int32Array
  /** What `dotsAbove` last wrote: the indices and scores of the vectors above the floor. */
  private aboveIndices: Int32Array
  private aboveScores: Float64Array
  private readonly chunks: number
  /** A vector's record: its components, then (at `scaleOffset`, 4-aligned) its scale. */
  private readonly stride: number
  private readonly scaleOffset: number
  private readonly query: number
  private readonly scoresAt: number
  private readonly aboveScoresAt: number
  private readonly centroidsAt: number
  private readonly vectorsAt: number
  private readonly starts: Uint32Array
  private readonly lengths: Uint32Array
  private readonly capacities: Uint32Array
  /** By partition: the slots placed there (its positions and the slots sharing them), which a scan's share counts. */
  private readonly slotsIn: Uint32Array
  /** By position: the first slot whose vector it holds (its scale, `Documents.vectorScales`, is in the vector's record). */
  private slotAt = new Uint32Array(0)
  /** By position: the last slot of its chain, where the next slot sharing its vector is put, and its partition. */
  private lastSlotAt = new Uint32Array(0)
  private partitionAt = new Uint16Array(0)
  /** By slot: the next slot sharing its position, or `NONE`. */
  private nextSharing = new Uint32Array(0)
  /**
   * By the first slot of a position that several share: each kept field's code (`KEPT_FIELDS`' order)
   * if all its slots hold it, else `MIXED_CODES`. A prefilter that refuses such a code refuses the
   * whole chain, skipped unwalked: 60% of the catalogue's entities share 12 vectors, and under
   * `type:committee` a chain of persons near the query (50,000 of a role) was walked to refuse each.
   */
  private chainCodes = new Map<number, Uint32Array>()
  /**
   * By broad prefilter (`nearest`'s; the resident index keeps one until a write), its verdict on
   * each position, asked the first time the position beats a scan's floor. A prefilter asked of a
   * slot reads its codes where they lie, at random in memory; a verdict lies beside the position's
   * score. Under `type:person` (60% of the catalogue's slots), a common word's nearest bills all beat
   * the floor that the far persons set, and asking each cost 35 ms a query. Kept as long as the
   * prefilter is (the resident index keeps 32, until a write: a byte a position each); let go when a
   * vector is added (positions move).
   */
  private verdicts = new WeakMap<Prefilter, Uint8Array>()
  /** The first slot of each position (plus one; 0 is empty), by a hash of its vector: open addressing, at most half full. */
  private firstSlotsByVector = new Uint32Array(0)
  private distinct = 0
  /** By slot: the position of its vector (that of a dead slot, until compaction, or none). */
  private positionOf = new Uint32Array(0)
  /** Positions taken, holes of moved partitions included. */
  private end = 0
  /**
   * The vectors of slots `nearestAmong` was given, gathered in memory's order, by the slots' array
   * (a prefilter's, which the resident index asks again until a write: `allowedSlots`): read where
   * they lie, one a page, a vector cost 150 ns; gathered, a few. The least recently asked are let go
   * past `GATHERED_BYTES`; all of them when a vector is added (after a write the resident index asks
   * its prefilters anew: what the old ones kept is not asked again).
   */
  private gathered = new Map<Uint32Array, Gathered>()
  private gatheredBytes = 0

  private constructor(
    private readonly documents: Documents,
    /** The centroids as Int8, one after the other, with the scale of each. */
    readonly centroids: Int8Array,
    readonly centroidScales: Float32Array,
    /** How many live vectors the centroids were trained for. */
    readonly trainedFor: number,
  ) {
    const { dimensions } = documents
    const count = centroidScales.length
    this.chunks = Math.ceil(dimensions / 16)
    this.scaleOffset = aligned(dimensions, 4)
    this.stride = this.scaleOffset + 4
    this.query = 0
    this.scoresAt = this.chunks * 16
    this.aboveScoresAt = this.scoresAt + 4 * BATCH
    this.centroidsAt = this.aboveScoresAt + 8 * BATCH
    // The kernel reads 16 bytes at a time: a vector's last ones may read 15 past it.
    this.vectorsAt = aligned(this.centroidsAt + count * dimensions + 16, 16)
    this.memory = new WebAssembly.Memory({ initial: Math.ceil((this.vectorsAt + 16) / PAGE) })
    ;({ dotsFrom: this.dotsFrom, dotsAbove: this.dotsAbove } = dotProductsOver(this.memory))
    ;[this.bytes, this.floats, this.scores, this.aboveIndices, this.aboveScores] = this.views()
    this.bytes.set(centroids, this.centroidsAt)
    this.starts = new Uint32Array(count)
    this.lengths = new Uint32Array(count)
    this.capacities = new Uint32Array(count)
    this.slotsIn = new Uint32Array(count)
  }

  /** Partitions of documents' live vectors, around centroids trained on a sample of them. */
  static trained(documents: Documents): VectorPartitions {
    const live = liveSlotsOf(documents)
    const { centroids, scales } = VectorPartitions.trainedCentroids(documents, live, partitionsFor(live.length))
    return VectorPartitions.placed(documents, centroids, scales, live.length, live)
  }

  /** Partitions of documents' live vectors around the centroids of `trained` (documents made again). */
  static around(documents: Documents, trained: VectorPartitions): VectorPartitions {
    return VectorPartitions.placed(documents, trained.centroids, trained.centroidScales, trained.trainedFor, liveSlotsOf(documents))
  }

  private static placed(documents: Documents, centroids: Int8Array, scales: Float32Array, trainedFor: number, live: Uint32Array): VectorPartitions {
    const partitions = new VectorPartitions(documents, centroids, scales, trainedFor)
    // A slot whose vector an earlier one holds shares its position (and partition): not counted again.
    partitions.reserveSlots(documents.ids.length)
    const firstWith = Uint32Array.from(live, (slot) => partitions.firstSlotWith(slot))
    const nearest = Uint32Array.from(live, (slot, at) => (firstWith[at] === slot ? partitions.partitionOf(slot) : NONE))
    for (const partition of nearest) if (partition !== NONE) partitions.lengths[partition]!++
    // Room for an eighth more in each, for the writes to come.
    let start = 0
    partitions.lengths.forEach((length, partition) => {
      partitions.starts[partition] = start
      partitions.capacities[partition] = length + (length >> 3) + 4
      start += partitions.capacities[partition]!
    })
    partitions.reserve(start)
    partitions.end = start
    partitions.lengths.fill(0)
    live.forEach((slot, at) => (nearest[at] === NONE ? partitions.share(firstWith[at]!, slot) : partitions.place(nearest[at]!, slot)))
    documents.handVectorsTo(partitions)
    return partitions
  }

  /**
   * `count` centroids by spherical k-means over a sample of the live slots (a fixed sequence: the same
   * documents give the same partitions), seeded by distinct vectors (many entities share theirs: the
   * persons of a role whose names no word vector knows), as Int8 with their scales.
   */
  private static trainedCentroids(documents: Documents, live: Uint32Array, count: number): { centroids: Int8Array; scales: Float32Array } {
    const { dimensions } = documents
    let state = 1
    const random = () => (state = (state * 48271) % 2147483647) / 2147483647
    const sample = live.length <= count * SAMPLE_A_PARTITION ? live : Uint32Array.from({ length: count * SAMPLE_A_PARTITION }, () => live[Math.floor(random() * live.length)]!)
    const unitAt = (slot: number, into: Float32Array, at: number) => {
      const [components, scale] = [documents.vectorOf(slot), documents.vectorScales.values[slot]!]
      for (let component = 0; component < dimensions; component++) into[at + component]! += components[component]! * scale
    }
    // Seeds: the sample's first distinct vectors (by a hash of their components).
    const sums = new Float32Array(count * dimensions)
    const seen = new Set<number>()
    let seeded = 0
    for (const slot of sample) {
      if (seeded === count) break
      let hash = FNV_OFFSET_BASIS
      const components = documents.vectorOf(slot)
      for (let component = 0; component < dimensions; component++) hash = fnvMix(hash, components[component]! & 0xff)
      if (seen.has(hash)) continue
      seen.add(hash)
      unitAt(slot, sums, seeded++ * dimensions)
    }
    const centroids = new Int8Array(count * dimensions)
    const scales = new Float32Array(count)
    const quantize = () => {
      for (let centroid = 0; centroid < seeded; centroid++) {
        const from = centroid * dimensions
        scales[centroid] = quantizeInto(sums.subarray(from, from + dimensions), dimensions, centroids, from)
      }
    }
    quantize()
    for (let round = 0; round < TRAINING_ROUNDS; round++) {
      const partitions = new VectorPartitions(documents, centroids.subarray(0, seeded * dimensions), scales.subarray(0, seeded), live.length)
      const nearest = Array.from(sample, (slot) => partitions.partitionOf(slot))
      const counts = new Uint32Array(seeded)
      for (const partition of nearest) counts[partition]!++
      // An empty partition keeps its centroid.
      counts.forEach((taken, partition) => taken > 0 && sums.fill(0, partition * dimensions, (partition + 1) * dimensions))
      sample.forEach((slot, at) => unitAt(slot, sums, nearest[at]! * dimensions))
      quantize()
    }
    return { centroids: centroids.slice(0, seeded * dimensions), scales: scales.slice(0, seeded) }
  }

  /** How many distinct vectors the partitions hold: each once, however many slots share it. */
  get distinctVectors(): number {
    return this.distinct
  }

  /** Adds a slot's vector (put in documents since) to its nearest partition, or to the position holding it already. */
  add(slot: number): void {
    this.gathered.clear()
    this.gatheredBytes = 0
    this.verdicts = new WeakMap()
    this.reserveSlots(slot + 1)
    const first = this.firstSlotWith(slot)
    if (first !== slot) return this.share(first, slot)
    const partition = this.partitionOf(slot)
    if (this.lengths[partition] === this.capacities[partition]) this.move(partition, Math.max(16, 2 * this.capacities[partition]!))
    this.place(partition, slot)
  }

  /**
   * The `limit` nearest live vectors that the prefilter (if any) allows: the partitions nearest the
   * query scanned until `SCANNED_SHARE` of the live vectors has been (`ALLOWED_SHARE` under a
   * prefilter) and `limit` allowed found, twice `limit` kept by their Int8 score, those rescored
   * exactly; and at least `atLeast` vectors (a small index is scanned whole: its share would be a
   * partition or two). The prefilter is asked only of the vectors that would be kept: a broad one (a
   * narrow one goes to `nearestAmong`) refuses fewer than the kernel scores in the time it takes to ask.
   */
  nearest(vector: Float32Array, prefilter: Prefilter | null, limit: number, atLeast: number): ScoredHit[] {
    const { documents } = this
    const unit = unitOf(vector, documents.dimensions)
    this.setQuery(unit)
    const count = this.centroidScales.length
    this.dotsFrom(this.query, this.chunks, 0, count, this.scoresAt, this.centroidsAt, documents.dimensions)
    const closeness = Float32Array.from(this.scores.subarray(0, count), (score, partition) => score * this.centroidScales[partition]!)
    const order = Array.from(closeness.keys()).sort((a, b) => closeness[b]! - closeness[a]!)
    const candidates = new TopHits(Math.max(2 * limit, 20), documents.ids)
    const enough = Math.max(atLeast, (prefilter === null ? SCANNED_SHARE : ALLOWED_SHARE) * documents.live)
    const verdicts = prefilter === null ? null : this.verdictsOf(prefilter)
    let scanned = 0
    for (const partition of order) {
      if (scanned >= enough && candidates.size >= limit) break
      const start = this.starts[partition]!
      const length = this.lengths[partition]!
      for (let from = start; from < start + length; from += BATCH) this.offerFrom(from, Math.min(BATCH, start + length - from), prefilter, verdicts, candidates)
      scanned += this.slotsIn[partition]!
    }
    return exactHits(documents, unit, candidates.keptSlots(), limit)
  }

  /**
   * The `limit` nearest of the live `slots` (those a selective prefilter keeps), as `nearest` scores
   * them, without partitions: their vectors gathered in a row (`gatheredOf`), copied past the
   * partitions' and scanned as one.
   */
  nearestAmong(vector: Float32Array, slots: Uint32Array, limit: number): ScoredHit[] {
    const { stride } = this
    const unit = unitOf(vector, this.documents.dimensions)
    this.setQuery(unit)
    const gathered = this.gatheredOf(slots)
    const count = gathered.slots.length
    // Past the partitions' vectors (and the 15 bytes the kernel may read past the last).
    const at = aligned(this.vectorsAt + this.end * stride + 16, 16)
    this.reserveBytes(at + count * stride + 16)
    this.bytes.set(gathered.records, at)
    const candidates = new TopHits(Math.max(2 * limit, 20), this.documents.ids)
    for (let from = 0; from < count; from += BATCH) {
      const above = this.dotsAbove(this.query, this.chunks, from, Math.min(BATCH, count - from), at, stride, this.scaleOffset, candidates.floor(), this.scoresAt, this.aboveScoresAt)
      this.offerAbove(from, above, gathered.slots, null, null, null, candidates)
    }
    return exactHits(this.documents, unit, candidates.keptSlots(), limit)
  }

  /** The records of `slots`' vectors gathered in the order they lie in memory, and the slots (kept: `gathered`). */
  private gatheredOf(slots: Uint32Array): Gathered {
    const known = this.gathered.get(slots)
    if (known !== undefined) {
      // Last in the map's order: the most recently asked.
      this.gathered.delete(slots)
      this.gathered.set(slots, known)
      return known
    }
    const { positionOf, stride } = this
    // Slots sharing a position are each gathered (in the order of their slots).
    const inOrder = Uint32Array.from(slots).sort((a, b) => positionOf[a]! - positionOf[b]! || a - b)
    const records = new Int8Array(inOrder.length * stride)
    inOrder.forEach((slot, at) => {
      const from = this.vectorsAt + positionOf[slot]! * stride
      records.set(this.bytes.subarray(from, from + stride), at * stride)
    })
    const gathered = { records, slots: inOrder }
    this.gathered.set(slots, gathered)
    this.gatheredBytes += records.byteLength
    for (const [kept, { records: dropped }] of this.gathered) {
      if (this.gatheredBytes <= GATHERED_BYTES || kept === slots) break
      this.gathered.delete(kept)
      this.gatheredBytes -= dropped.byteLength
    }
    return gathered
  }

  /** Scores the `count` positions from `first` on, offers to `candidates` those live that the prefilter (if any) allows. */
  private offerFrom(first: number, count: number, prefilter: Prefilter | null, verdicts: Uint8Array | null, candidates: TopHits): void {
    const above = this.dotsAbove(this.query, this.chunks, first, count, this.vectorsAt, this.stride, this.scaleOffset, candidates.floor(), this.scoresAt, this.aboveScoresAt)
    this.offerAbove(first, above, this.slotAt, this.nextSharing, prefilter, verdicts, candidates)
  }

  /**
   * Offers to `candidates` the `above` vectors the kernel last found above the floor (`dotsAbove`),
   * whose slots are `slots` from `first` on: those above the worst kept, live, that the prefilter (if
   * any) allows (asked only of those, its verdicts on their positions kept in `verdicts`, given
   * with it); with `sharing`, each slot's chain of slots sharing its vector, in order, until one is
   * not kept. Only `nearest` passes a prefilter: the positions are the partitions'.
   */
  private offerAbove(first: number, above: number, slots: Uint32Array, sharing: Uint32Array | null, prefilter: Prefilter | null, verdicts: Uint8Array | null, candidates: TopHits): void {
    const alive = this.documents.alive.values
    const { aboveIndices, aboveScores } = this
    let floor = candidates.floor()
    for (let found = 0; found < above; found++) {
      const score = aboveScores[found]!
      if (score <= floor) continue
      const at = first + aboveIndices[found]!
      let verdict = ASK_EACH
      if (verdicts !== null) {
        verdict = verdicts[at]!
        if (verdict === UNASKED) verdicts[at] = verdict = this.verdictOn(at, prefilter!)
        if (verdict === REFUSED) continue
      }
      for (let slot = slots[at]!; slot !== NONE && score > floor; slot = sharing === null ? NONE : sharing[slot]!) {
        if (alive[slot] !== 1 || (verdict === ASK_EACH && prefilter !== null && !prefilter.allows(slot))) continue
        candidates.offer(slot, score)
        floor = candidates.floor()
      }
    }
  }

  /** The verdicts kept for a broad prefilter (`verdicts`). */
  private verdictsOf(prefilter: Prefilter): Uint8Array {
    let verdicts = this.verdicts.get(prefilter)
    if (verdicts === undefined) this.verdicts.set(prefilter, (verdicts = new Uint8Array(this.end)))
    return verdicts
  }

  /**
   * A prefilter's verdict on a position: on its one slot; on a chain of slots sharing its vector,
   * refused whole when their common codes are (`chainCodes`), else each slot asked as it is walked.
   */
  private verdictOn(position: number, prefilter: Prefilter): number {
    const head = this.slotAt[position]!
    const chained = this.chainCodes.get(head)
    if (chained !== undefined) return prefilter.refusesEvery(chained) ? REFUSED : ASK_EACH
    return prefilter.allows(head) ? ALLOWED : REFUSED
  }

  /** A placed slot's Int8 components, where they lie in memory (a view, valid until the memory grows). */
  vectorOf(slot: number): Int8Array {
    const from = this.vectorsAt + this.positionOf[slot]! * this.stride
    return this.bytes.subarray(from, from + this.documents.dimensions)
  }

  /** The partition whose centroid is nearest a slot's vector (training reads it too, a round's centroids partitioned). */
  partitionOf(slot: number): number {
    const { dimensions } = this.documents
    this.bytes.fill(0, this.query, this.query + this.chunks * 16)
    this.bytes.set(this.documents.vectorOf(slot), this.query)
    const count = this.centroidScales.length
    this.dotsFrom(this.query, this.chunks, 0, count, this.scoresAt, this.centroidsAt, dimensions)
    return nearestOf(this.scores, this.centroidScales)
  }

  /** The query at unit length as Int8 (its scale is the same for every candidate: left out). */
  private setQuery(unit: Float32Array): void {
    quantizeInto(unit, unit.length, this.bytes, this.query)
  }

  private place(partition: number, slot: number): void {
    const position = this.starts[partition]! + this.lengths[partition]!++
    this.slotsIn[partition]!++
    this.positionOf[slot] = position
    const record = this.vectorsAt + position * this.stride
    this.bytes.set(this.documents.vectorOf(slot), record)
    this.floats[(record + this.scaleOffset) >> 2] = this.documents.vectorScales.values[slot]!
    this.slotAt[position] = slot
    this.lastSlotAt[position] = slot
    this.partitionAt[position] = partition
  }

  /** `slot` put at the end of the chain of `first`'s position, whose vector is its own. */
  private share(first: number, slot: number): void {
    const position = this.positionOf[first]!
    const head = this.slotAt[position]!
    const { fields } = this.documents
    let codes = this.chainCodes.get(head)
    if (codes === undefined) this.chainCodes.set(head, (codes = Uint32Array.from(KEPT_FIELDS, (field) => fields[field].codes.values[head]!)))
    KEPT_FIELDS.forEach((field, at) => codes[at] !== fields[field].codes.values[slot] && (codes[at] = MIXED_CODES))
    this.positionOf[slot] = position
    this.nextSharing[this.lastSlotAt[position]!] = slot
    this.lastSlotAt[position] = slot
    this.slotsIn[this.partitionAt[position]!]!++
  }

  /** Room for `slots` slots in the columns by slot (`positionOf`, `nextSharing`: a slot shares nothing until chained). */
  private reserveSlots(slots: number): void {
    if (slots <= this.positionOf.length) return
    const length = Math.max(slots, Math.ceil(this.positionOf.length * 1.25))
    this.positionOf = grown(this.positionOf, new Uint32Array(length))
    this.nextSharing = grown(this.nextSharing, new Uint32Array(length).fill(NONE))
  }

  /** The first slot whose vector (components and scale) is `slot`'s; `slot` itself when none is, then recorded as the first with it. */
  private firstSlotWith(slot: number): number {
    const { documents } = this
    const components = documents.vectorOf(slot)
    const scale = documents.vectorScales.values[slot]!
    if (2 * (this.distinct + 1) > this.firstSlotsByVector.length) this.rehash()
    const mask = this.firstSlotsByVector.length - 1
    for (let at = vectorHash(components, scale) & mask; ; at = (at + 1) & mask) {
      const entry = this.firstSlotsByVector[at]!
      if (entry === 0) {
        this.firstSlotsByVector[at] = slot + 1
        this.distinct++
        return slot
      }
      const first = entry - 1
      if (documents.vectorScales.values[first] === scale && equalBytes(documents.vectorOf(first), components)) return first
    }
  }

  /** The table of first slots made again, a quarter full, from what it held. */
  private rehash(): void {
    const old = this.firstSlotsByVector
    const size = Math.max(1024, 2 ** Math.ceil(Math.log2(4 * (this.distinct + 1))))
    this.firstSlotsByVector = new Uint32Array(size)
    const { documents } = this
    const mask = size - 1
    for (const entry of old) {
      if (entry === 0) continue
      const first = entry - 1
      let at = vectorHash(documents.vectorOf(first), documents.vectorScales.values[first]!) & mask
      while (this.firstSlotsByVector[at] !== 0) at = (at + 1) & mask
      this.firstSlotsByVector[at] = entry
    }
  }

  /** Moves a full partition to the end, with room for `capacity` (what it held is let go at compaction). */
  private move(partition: number, capacity: number): void {
    const { stride } = this
    this.reserve(this.end + capacity)
    const [from, length] = [this.starts[partition]!, this.lengths[partition]!]
    this.bytes.copyWithin(this.vectorsAt + this.end * stride, this.vectorsAt + from * stride, this.vectorsAt + (from + length) * stride)
    this.slotAt.copyWithin(this.end, from, from + length)
    this.lastSlotAt.copyWithin(this.end, from, from + length)
    this.partitionAt.copyWithin(this.end, from, from + length)
    for (let position = this.end; position < this.end + length; position++) {
      for (let slot = this.slotAt[position]!; slot !== NONE; slot = this.nextSharing[slot]!) this.positionOf[slot] = position
    }
    this.starts[partition] = this.end
    this.capacities[partition] = capacity
    this.end += capacity
  }

  /** Room for `positions` vectors: the memory grown (its views made again) and the columns by position. */
  private reserve(positions: number): void {
    this.reserveBytes(this.vectorsAt + positions * this.stride + 16)
    if (positions > this.slotAt.length) {
      const length = Math.max(positions, Math.ceil(this.slotAt.length * 1.25))
      this.slotAt = grown(this.slotAt, new Uint32Array(length))
      this.lastSlotAt = grown(this.lastSlotAt, new Uint32Array(length))
      this.partitionAt = grown(this.partitionAt, new Uint16Array(length))
    }
  }

  /** Memory of `needed` bytes at least (its views made again when grown). */
  private reserveBytes(needed: number): void {
    if (needed <= this.memory.buffer.byteLength) return
    this.memory.grow(Math.ceil((Math.max(needed, this.memory.buffer.byteLength * 1.25) - this.memory.buffer.byteLength) / PAGE))
    ;[this.bytes, this.floats, this.scores, this.aboveIndices, this.aboveScores] = this.views()
  }

  private views(): [Int8Array, Float32Array, Int32Array, Int32Array, Float64Array] {
    const { buffer } = this.memory
    const scores = new Int32Array(buffer, this.scoresAt, BATCH)
    return [new Int8Array(buffer), new Float32Array(buffer), scores, scores, new Float64Array(buffer, this.aboveScoresAt, BATCH)]
  }
}

function grown<T extends Uint32Array | Uint16Array | Float32Array>(from: T, to: T): T {
  to.set(from)
  return to
}

function liveSlotsOf(documents: Documents): Uint32Array {
  const live = new Uint32Array(documents.live)
  let at = 0
  for (let slot = 0; slot < documents.ids.length; slot++) if (documents.alive.values[slot] === 1) live[at++] = slot
  return live
}

/** FNV-1a over a vector's components and its scale's bits. */
function vectorHash(components: Int8Array, scale: number): number {
  let hash = FNV_OFFSET_BASIS
  for (let at = 0; at < components.length; at++) hash = fnvMix(hash, components[at]! & 0xff)
  return fnvMix(hash, scaleBits(scale)) >>> 0
}

const scaleView = new Float32Array(1)
const scaleBitsView = new Uint32Array(scaleView.buffer)
function scaleBits(scale: number): number {
  scaleView[0] = scale
  return scaleBitsView[0]!
}

function equalBytes(a: Int8Array, b: Int8Array): boolean {
  for (let at = 0; at < a.length; at++) if (a[at] !== b[at]) return false
  return true
}

/** The index of the greatest score times its scale. */
function nearestOf(scores: Int32Array, scales: Float32Array): number {
  let best = 0
  let bestScore = -Infinity
  for (let at = 0; at < scales.length; at++) {
    const score = scores[at]! * scales[at]!
    if (score > bestScore) [best, bestScore] = [at, score]
  }
  return best
}
