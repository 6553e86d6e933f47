type Numbers = Uint8Array | Int8Array | Uint16Array | Uint32Array | Float32Array

/**
 * A typed array that grows by half again when full: postings and the columns of documents append
 * to it. `trim` lets the slack go once a load is done.
 */
export class Growable<T extends Numbers> {
  values: T
  length: number

  /** Empty, or holding `values` whole (a view of a larger array, say: the first push past them copies them into one of their own). */
  constructor(
    private readonly make: (length: number) => T,
    values?: T,
  ) {
    this.values = values ?? make(4)
    this.length = values?.length ?? 0
  }

  push(value: number): void {
    if (this.length === this.values.length) this.grow(this.length + 1)
    this.values[this.length++] = value
  }

  /** Room for `more` values without growing again. */
  reserve(more: number): void {
    if (this.length + more > this.values.length) this.grow(this.length + more)
  }

  trim(): void {
    if (this.values.length === this.length) return
    const exact = this.make(this.length)
    exact.set(this.values.subarray(0, this.length))
    this.values = exact
  }

  private grow(needed: number): void {
    const next = this.make(Math.max(needed, Math.ceil(this.values.length * 1.5)))
    next.set(this.values)
    this.values = next
  }
}

// One maker of each kind, shared: a closure made for each of the index's 200,000 postings lists was
// as many more objects for V8's collections to mark.
const makeInt8 = (length: number) => new Int8Array(length)
const makeUint8 = (length: number) => new Uint8Array(length)
const makeUint16 = (length: number) => new Uint16Array(length)
const makeUint32 = (length: number) => new Uint32Array(length)
const makeFloat32 = (length: number) => new Float32Array(length)
export const growableInt8 = () => new Growable(makeInt8)
export const growableUint8 = (values?: Uint8Array) => new Growable(makeUint8, values)
export const growableUint16 = (values?: Uint16Array) => new Growable(makeUint16, values)
export const growableUint32 = (values?: Uint32Array) => new Growable(makeUint32, values)
export const growableFloat32 = () => new Growable(makeFloat32)

/** UTF-16 units as a string again (a few thousand at a time: `fromCharCode` takes them as arguments). */
export function stringOfUnits(units: Uint16Array, from: number, end: number): string {
  let text = ''
  for (; from < end; from += 4096) text += String.fromCharCode(...units.subarray(from, Math.min(from + 4096, end)))
  return text
}

/** Sets bit `index` of a bitset kept in 32-bit words. */
export function setBit(words: Uint32Array, index: number): void {
  words[index >>> 5]! |= 1 << (index & 31)
}

/**
 * Lists made at once in one array sized exactly, `sizes[list]` values each: what a load makes in
 * place of lists grown a value at a time, whose outgrown arrays left the allocator's heap in holes
 * (at 1,000,000 documents, some 300 MB of RSS that nothing used). The caller makes the arrays
 * (`total` values), writes each value at the place `next` gives, and takes each list as a view (`of`).
 */
export class PackedLists {
  private readonly starts: Float64Array
  private readonly places: Float64Array

  constructor(sizes: Uint32Array) {
    this.starts = new Float64Array(sizes.length + 1)
    for (let list = 0; list < sizes.length; list++) this.starts[list + 1] = this.starts[list]! + sizes[list]!
    this.places = this.starts.slice(0, sizes.length)
  }

  get total(): number {
    return this.starts[this.starts.length - 1]!
  }

  /** The next place of `list`: its values are written in the order they come. */
  next(list: number): number {
    return this.places[list]!++
  }

  /** List `list` of `values`, as a view. */
  of<T extends Numbers>(values: T, list: number): T {
    return values.subarray(this.starts[list]!, this.starts[list + 1]!) as T
  }
}

/**
 * Appends `vector`'s `dimensions` components to `vectors` as Int8 (`quantizeInto`), and returns
 * what turns their dot product with a unit vector into the cosine.
 */
export function pushQuantized(vectors: Growable<Int8Array>, vector: Float32Array, dimensions: number): number {
  vectors.reserve(dimensions)
  const start = vectors.length
  vectors.length += dimensions
  return quantizeInto(vector, dimensions, vectors.values, start)
}

/**
 * Writes `vector`'s `dimensions` components into `into` at `at` as Int8, scaled so that the largest
 * is 127, and returns one over their norm (0 for a zero vector, written as zeros).
 */
export function quantizeInto(vector: ArrayLike<number>, dimensions: number, into: Int8Array, at: number): number {
  let largest = 0
  for (let component = 0; component < dimensions; component++) largest = Math.max(largest, Math.abs(vector[component]!))
  into.fill(0, at, at + dimensions)
  if (largest === 0) return 0
  let norm = 0
  for (let component = 0; component < dimensions; component++) {
    const value = Math.round((vector[component]! / largest) * 127)
    into[at + component] = value
    norm += value * value
  }
  return 1 / Math.sqrt(norm)
}
