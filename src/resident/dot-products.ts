/**
 * The dot products of Int8 vectors, 16 components at once (WebAssembly SIMD): a scan of partitions
 * at a tenth of the CPU of the same loop in JavaScript. The module is dot-products.wat, assembled
 * (wabt's `wat2wasm`: `npx --package wabt@1.0.37 wat2wasm dot-products.wat`) into the bytes below.
 */
const MODULE = Uint8Array.from(atob('AGFzbQEAAAABCwFgB39/f39/f38AAg8BA2VudgZtZW1vcnkCAAEDAgEABwwBCGRvdHNGcm9tAAAKtwEBtAECA38DeyAFIAIgBmxqIQggBCADQQJ0aiEHAkADQCAEIAdPDQH9DAAAAAAAAAAAAAAAAAAAAAAhCkEAIQkDQCAIIAlBBHRq/QAEACELIAAgCUEEdGr9AAQAIQwgCiALIAz9nAH9fiALIAz9nQH9fv2uAf2uASEKIAlBAWohCSAJIAFJDQALIAQgCv0bACAK/RsBaiAK/RsCIAr9GwNqajYCACAEQQRqIQQgCCAGaiEIDAALCws='), (character) => character.charCodeAt(0))

/** Computes, for the `count` Int8 vectors from `base + first * stride` on (a partition's), each dotted with the query at `query` (`chunks` of 16 bytes, zero past its dimensions), as Int32 at `out`. */
export type DotProductsFrom = (query: number, chunks: number, first: number, count: number, out: number, base: number, stride: number) => void

let compiled: WebAssembly.Module | undefined

/** The kernels over `memory` (compiled once; instantiated for each memory). */
export function dotProductsOver(memory: WebAssembly.Memory): DotProductsFrom {
  compiled ??= new WebAssembly.Module(MODULE)
  const { exports } = new WebAssembly.Instance(compiled, { env: { memory } })
  return exports.dotsFrom as DotProductsFrom
}
