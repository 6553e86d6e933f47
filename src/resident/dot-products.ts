/**
 * The dot products of Int8 vectors, 16 components at once and two vectors a pass (WebAssembly SIMD,
 * `i32x4.dot_i16x8_s`): a scan of partitions at a twentieth of the CPU of the same loop in JavaScript
 * (300,000 vectors of 100 components in 2.0 ms, where one vector a pass with `extmul` and
 * `extadd_pairwise` took 3.5). The module is dot-products.wat, assembled
 * (wabt's `wat2wasm`: `npx --package wabt@1.0.37 wat2wasm dot-products.wat`) into the bytes below.
 */
const MODULE = Uint8Array.from(atob('AGFzbQEAAAABCwFgB39/f39/f38AAg8BA2VudgZtZW1vcnkCAAEDAgEABwwBCGRvdHNGcm9tAAAKsQMBrgMCBH8HeyAFIAIgBmxqIQggBCADQQJ0aiEHIAFBBHQhCgJAA0AgBEEIaiAHSw0B/QwAAAAAAAAAAAAAAAAAAAAAIQv9DAAAAAAAAAAAAAAAAAAAAAAhDEEAIQkDQCAAIAlq/QAEACENIA39hwEhDiAN/YgBIQ8gCCAJav0ABAAhECAIIAZqIAlq/QAEACERIAsgEP2HASAO/boBIBD9iAEgD/26Af2uAf2uASELIAwgEf2HASAO/boBIBH9iAEgD/26Af2uAf2uASEMIAlBEGohCSAJIApJDQALIAQgC/0bACAL/RsBaiAL/RsCIAv9GwNqajYCACAEIAz9GwAgDP0bAWogDP0bAiAM/RsDamo2AgQgBEEIaiEEIAggBkEBdGohCAwACwsgBCAHSQRA/QwAAAAAAAAAAAAAAAAAAAAAIQtBACEJA0AgACAJav0ABAAhDSAIIAlq/QAEACEQIAsgEP2HASAN/YcB/boBIBD9iAEgDf2IAf26Af2uAf2uASELIAlBEGohCSAJIApJDQALIAQgC/0bACAL/RsBaiAL/RsCIAv9GwNqajYCAAsL'), (character) => character.charCodeAt(0))

/** Computes, for the `count` Int8 vectors from `base + first * stride` on (a partition's), each dotted with the query at `query` (`chunks` of 16 bytes, zero past its dimensions), as Int32 at `out`. */
export type DotProductsFrom = (query: number, chunks: number, first: number, count: number, out: number, base: number, stride: number) => void

let compiled: WebAssembly.Module | undefined

/** The kernels over `memory` (compiled once; instantiated for each memory). */
export function dotProductsOver(memory: WebAssembly.Memory): DotProductsFrom {
  compiled ??= new WebAssembly.Module(MODULE)
  const { exports } = new WebAssembly.Instance(compiled, { env: { memory } })
  return exports.dotsFrom as DotProductsFrom
}
