import { CONTRACT_FIELDS, type ContractField } from '../contract/fields.js'
import type { IndexedEntity } from '../ports/search-index.js'
import { countsOf } from '../search/bm25.js'
import { GramPostings } from './gram-postings.js'
import { Growable, growableFloat32, growableInt8, growableUint16, growableUint32, growableUint8, PackedLists, pushQuantized, quantizeInto, setBit, stringOfUnits } from './growable.js'
import { IdColumn } from './id-column.js'
import { TermDictionary } from './term-dictionary.js'

/**
 * The contract fields kept for prefilters: those of few values (and dates, for ranges). A qualifier
 * on another (a title, a name, an identifier: as many values as entities) goes to the index behind.
 */
export const KEPT_FIELDS = ['type', 'jurisdiction', 'status', 'localType', 'authority', 'displayDate'] as const satisfies readonly ContractField[]
export type KeptField = (typeof KEPT_FIELDS)[number]

/**
 * The other contract fields (titles, names, local identifiers): about as many values as entities,
 * held only while the documents are few (`Documents.holdsWideFields`), for qualifiers on them.
 */
export const WIDE_FIELDS = CONTRACT_FIELDS.filter((field): field is Exclude<ContractField, KeptField> => !(KEPT_FIELDS as readonly string[]).includes(field))
export type WideField = (typeof WIDE_FIELDS)[number]

/** A field's value by document, as a code (0: none): each distinct value held once. */
export class ValueColumn {
  readonly codes = growableUint32()
  /** Code to value; code 0 is the missing value. */
  readonly values: (string | undefined)[] = [undefined]
  readonly codeOf = new Map<string, number>()

  /** A slot's value (slots come in order). */
  push(_slot: number, value: string | undefined): void {
    this.codes.push(this.codeFor(value))
  }

  /** The value's code, a new one the first time. */
  protected codeFor(value: string | undefined): number {
    let code = value === undefined ? 0 : this.codeOf.get(value)
    if (code === undefined) {
      code = this.values.length
      this.values.push(value)
      this.codeOf.set(value!, code)
      this.newCode()
    }
    return code
  }

  protected newCode(): void {}
}

/** One kept field: each document's value as a code (0: none), and each code's documents. */
export class FieldColumn extends ValueColumn {
  /** Code to the slots that held it (dead ones too, until compaction). */
  readonly slots: Growable<Uint32Array>[] = [growableUint32()]

  /** A slot's value; its slot is listed under its code unless a load lists them all at once (`index`). */
  override push(slot: number, value: string | undefined, listed = true): void {
    const code = this.codeFor(value)
    this.codes.push(code)
    if (listed) this.slots[code]!.push(slot)
  }

  protected override newCode(): void {
    this.slots.push(growableUint32())
  }

  /** Lists each code's slots at once (`PackedLists`), those `alive` marks, after a load. */
  index(alive: Uint8Array, slots: number): void {
    const codes = this.codes.values
    const sizes = new Uint32Array(this.values.length)
    for (let slot = 0; slot < slots; slot++) if (alive[slot] === 1) sizes[codes[slot]!]!++
    const packed = new PackedLists(sizes)
    const listed = new Uint32Array(packed.total)
    for (let slot = 0; slot < slots; slot++) if (alive[slot] === 1) listed[packed.next(codes[slot]!)] = slot
    this.slots.forEach((_, code) => (this.slots[code] = growableUint32(packed.of(listed, code))))
  }
}

/** The units an id is given room for when a load reserves its slots (the catalogue's are 6 to 10). */
const UNITS_AN_ID = 12

/** What holds the vectors once the documents have handed them over (`Documents.handVectorsTo`). */
export interface VectorHolder {
  /** A slot's Int8 components, as a view valid until the holder's next write. */
  vectorOf(slot: number): Int8Array
}

/** What BM25 reads of a field over the live documents (`FieldStatistics`, kept as documents come and go). */
export interface LiveStatistics {
  count: number
  totalLength: number
}

/**
 * The documents of the resident index, by slot: a slot is taken by each version of an entity (an
 * update takes a new one and kills the old), so that postings only ever append. Columns hold what
 * ranking reads: ids, liveness, kept fields, each field's terms (forward, for phrases) and lengths,
 * the names' text (for trigram scores) and the vector, as Int8 with a scale (a quarter of Float32's
 * memory; cosine similarity keeps two to three decimals).
 */
export class Documents {
  readonly ids = new IdColumn()
  readonly alive = growableUint8()
  readonly fields = Object.fromEntries(KEPT_FIELDS.map((field) => [field, new FieldColumn()])) as Record<KeptField, FieldColumn>
  /**
   * The wide fields' values, while held (`holdsWideFields`): a title, name or identifier qualifier
   * is then answered here. Null once let go (`letWideFieldsGo`): such a qualifier goes to the index behind.
   */
  wideFields: Record<WideField, ValueColumn> | null = Object.fromEntries(WIDE_FIELDS.map((field) => [field, new ValueColumn()])) as Record<WideField, ValueColumn>
  readonly tokens = new TermDictionary()
  readonly names = new TermDictionary()
  /** Forward tokens: slot s's are the terms numbered `tokenTerms[tokenStarts[s] .. tokenStarts[s + 1]]`. */
  readonly tokenStarts = growableUint32()
  readonly tokenTerms = growableUint32()
  /** Each slot's number of tokens (what `tokenStarts` gives too): the postings loops read one column a slot. */
  readonly tokenLengths = growableUint32()
  readonly nameLengths = growableUint32()
  /** One bit a slot, 1 where it has names (a pruned query reads it for every posting it passes over: it stays in the processor's cache). */
  readonly namedSlots = growableUint32()
  /**
   * The names joined by spaces ('' without names), as `textScorer` reads them for trigram scores: their
   * UTF-16 units one slot after another, slot s's from `namesStarts[s]` to `namesStarts[s + 1]`. A name
   * query reads tens of thousands of slots' names; packed, each is a cache line or two, not a string
   * somewhere in the heap behind a pointer (26,000 at random: 3.6 ms as strings, 1.3 ms packed).
   */
  readonly namesUnits = growableUint16()
  readonly namesStarts = growableUint32()
  /** The trigrams of the joined names (spaces included, as `textScorer` reads them), each once a document. */
  readonly grams = new GramPostings()
  /**
   * One bit a slot, 1 where its joined names hold a trigram more than once: elsewhere a typed
   * trigram's score there is known from its postings and the names' length alone (`rankText`).
   */
  readonly gramsRepeated = growableUint32()
  /**
   * The vectors as Int8, by slot, until a holder takes them (`handVectorsTo`: the vectors' partitions,
   * which keep them in their own order; both copies were 100 MB at 1,000,000 entities). From then on
   * only the vector last put is kept here, for the holder to add.
   */
  private vectors = growableInt8()
  private vectorHolder: VectorHolder | null = null
  private readonly lastVector: { slot: number; components: Int8Array }
  /** Per slot: the Int8 components' scale, over the vector's norm (a dot product is then the cosine). */
  readonly vectorScales = growableFloat32()
  readonly tokenStatistics: LiveStatistics = { count: 0, totalLength: 0 }
  readonly nameStatistics: LiveStatistics = { count: 0, totalLength: 0 }
  readonly gramStatistics: LiveStatistics = { count: 0, totalLength: 0 }
  dead = 0
  /**
   * While a load puts documents (`Documents.forLoad`), their postings wait for `loaded`, which makes
   * them all at once at their size; it reads the names' term numbers kept here. Null otherwise.
   */
  private loading: { nameStarts: Growable<Uint32Array>; nameTerms: Growable<Uint32Array> } | null = null

  constructor(readonly dimensions: number) {
    this.tokenStarts.push(0)
    this.namesStarts.push(0)
    this.lastVector = { slot: -1, components: new Int8Array(dimensions) }
  }

  /** Room for `count` more documents in the columns of one value a slot (`loaded` lets what is left go). */
  reserve(count: number): void {
    this.ids.reserve(count, UNITS_AN_ID)
    for (const column of [this.alive, this.tokenStarts, this.tokenLengths, this.nameLengths, this.namesStarts, this.vectorScales]) column.reserve(count)
    for (const column of this.fieldColumns()) column.codes.reserve(count)
    this.namedSlots.reserve(Math.ceil(count / 32))
    this.gramsRepeated.reserve(Math.ceil(count / 32))
    if (this.vectorHolder === null) this.vectors.reserve(count * this.dimensions)
  }

  /** A slot's Int8 components (times its scale, the vector at unit length), as a view valid until the next write. */
  vectorOf(slot: number): Int8Array {
    if (slot === this.lastVector.slot) return this.lastVector.components
    if (this.vectorHolder !== null) return this.vectorHolder.vectorOf(slot)
    return this.vectors.values.subarray(slot * this.dimensions, (slot + 1) * this.dimensions)
  }

  /** From now on `holder` keeps the vectors of every slot put so far, and adds each one put later. */
  handVectorsTo(holder: VectorHolder): void {
    this.vectorHolder = holder
    this.vectors = growableInt8()
    this.lastVector.slot = -1
  }

  /** Documents to load: `put` them all, then `loaded` makes their postings (searched before, they match nothing). */
  static forLoad(dimensions: number, holdsWideFields = true): Documents {
    const documents = new Documents(dimensions)
    if (!holdsWideFields) documents.letWideFieldsGo()
    documents.loading = { nameStarts: growableUint32(Uint32Array.of(0)), nameTerms: growableUint32() }
    return documents
  }

  get live(): number {
    return this.ids.length - this.dead
  }

  get holdsWideFields(): boolean {
    return this.wideFields !== null
  }

  /** From now on the wide fields' values are not held (nor asked for: `keepsFieldsOf`). */
  letWideFieldsGo(): void {
    this.wideFields = null
  }

  /** Whether every qualifier names a field held here: a kept field, or a wide one while held. */
  keepsFieldsOf(qualifiers: readonly { field: string }[]): boolean {
    return qualifiers.every(({ field }) => (KEPT_FIELDS as readonly string[]).includes(field) || (this.wideFields !== null && (WIDE_FIELDS as readonly string[]).includes(field)))
  }

  /** The column of a field held here (`keepsFieldsOf`). */
  columnOf(field: string): FieldColumn | ValueColumn {
    return this.fields[field as KeptField] ?? this.wideFields![field as WideField]
  }

  /** The columns of every field held: the kept ones, then the wide ones while held. */
  private fieldColumns(): ValueColumn[] {
    return [...Object.values(this.fields), ...Object.values(this.wideFields ?? {})]
  }

  /** Adds an entity's current version (its earlier one, if any, dies). */
  put(entity: IndexedEntity): void {
    this.remove(entity.id)
    const slot = this.ids.push(entity.id)
    this.alive.push(1)
    const { loading } = this
    for (const field of KEPT_FIELDS) this.fields[field].push(slot, entity.fields[field], loading === null)
    if (this.wideFields !== null) for (const field of WIDE_FIELDS) this.wideFields[field].push(slot, entity.fields[field])
    for (const token of entity.tokens) this.tokenTerms.push(this.tokens.termOf(token).number)
    this.tokenStarts.push(this.tokenTerms.length)
    this.tokenLengths.push(entity.tokens.length)
    this.nameLengths.push(entity.names.length)
    if ((slot & 31) === 0) {
      this.namedSlots.push(0)
      this.gramsRepeated.push(0)
    }
    if (entity.names.length > 0) setBit(this.namedSlots.values, slot)
    const text = entity.names.join(' ')
    for (let at = 0; at < text.length; at++) this.namesUnits.push(text.charCodeAt(at))
    this.namesStarts.push(this.namesUnits.length)
    if (loading === null) {
      this.tokens.add(slot, countsOf(entity.tokens), entity.tokens.length)
      this.names.add(slot, countsOf(entity.names), entity.names.length)
      if (this.grams.add(slot, text)) setBit(this.gramsRepeated.values, slot)
    } else {
      for (const name of entity.names) loading.nameTerms.push(this.names.termOf(name).number)
      loading.nameStarts.push(loading.nameTerms.length)
    }
    this.count(slot, 1)
    if (this.vectorHolder === null) this.vectorScales.push(pushQuantized(this.vectors, entity.vector, this.dimensions))
    else {
      this.lastVector.slot = slot
      this.vectorScales.push(quantizeInto(entity.vector, this.dimensions, this.lastVector.components, 0))
    }
  }

  /** The live slot of the entity `id`, if any. */
  slotOf(id: string): number | undefined {
    const slot = this.ids.lastSlotOf(id)
    return slot >= 0 && this.alive.values[slot] === 1 ? slot : undefined
  }

  remove(id: string): void {
    const slot = this.slotOf(id)
    if (slot === undefined) return
    this.alive.values[slot] = 0
    this.dead++
    // While loading, no posting counts it yet.
    if (this.loading === null) {
      this.tokens.remove(countsOf(this.tokensOf(slot)))
      this.names.remove(countsOf(this.namesOf(slot)))
      this.grams.remove(this.namesTextOf(slot))
    }
    this.count(slot, -1)
  }

  /** A live slot's entity, as it was put (its vector as the Int8 components give it back, at unit length). */
  entityAt(slot: number): IndexedEntity {
    const fields: IndexedEntity['fields'] = {}
    for (const field of [...KEPT_FIELDS, ...(this.wideFields === null ? [] : WIDE_FIELDS)]) {
      const column = this.columnOf(field)
      const value = column.values[column.codes.values[slot]!]
      if (value !== undefined) fields[field] = value
    }
    const scale = this.vectorScales.values[slot]!
    const vector = Float32Array.from(this.vectorOf(slot), (component) => component * scale)
    return { id: this.ids.at(slot), fields, tokens: this.tokensOf(slot), names: this.namesOf(slot), vector }
  }

  /** A slot's name words, from the joined text that trigram scores read. */
  namesOf(slot: number): string[] {
    const text = this.namesTextOf(slot)
    return text === '' ? [] : text.split(' ')
  }

  /** A slot's names joined by spaces, as a string again. */
  namesTextOf(slot: number): string {
    return stringOfUnits(this.namesUnits.values, this.namesStarts.values[slot]!, this.namesStarts.values[slot + 1]!)
  }

  /** Ends a load (`forLoad`): the postings of every live slot made at once, and the columns' slack let go (they grew by half again each time). */
  loaded(): void {
    const { loading } = this
    if (loading === null) return
    this.loading = null
    const slots = this.ids.length
    const alive = this.alive.values
    this.tokens.index({ starts: this.tokenStarts.values, terms: this.tokenTerms.values }, alive, slots)
    this.names.index({ starts: loading.nameStarts.values, terms: loading.nameTerms.values }, alive, slots)
    this.grams.index(this.namesUnits.values, this.namesStarts.values, alive, slots, this.gramsRepeated.values)
    for (const field of KEPT_FIELDS) this.fields[field].index(alive, slots)
    for (const column of [this.alive, this.tokenStarts, this.tokenTerms, this.tokenLengths, this.nameLengths, this.namedSlots, this.gramsRepeated, this.namesUnits, this.namesStarts, this.vectors, this.vectorScales]) column.trim()
    for (const column of this.fieldColumns()) column.codes.trim()
    this.ids.trim()
  }

  tokensOf(slot: number): string[] {
    return Array.from(this.tokenTerms.values.subarray(this.tokenStarts.values[slot]!, this.tokenStarts.values[slot + 1]!), (number) => this.tokens.list[number]!.text)
  }

  tokenLength(slot: number): number {
    return this.tokenLengths.values[slot]!
  }

  gramLength(slot: number): number {
    return Math.max(0, this.namesStarts.values[slot + 1]! - this.namesStarts.values[slot]! - 2)
  }

  private count(slot: number, sign: 1 | -1): void {
    for (const [statistics, length] of [
      [this.tokenStatistics, this.tokenLength(slot)],
      [this.nameStatistics, this.nameLengths.values[slot]!],
      [this.gramStatistics, this.gramLength(slot)],
    ] as const) {
      statistics.count += sign
      statistics.totalLength += sign * length
    }
  }
}
