/**
 * The dot products of Int8 vectors, 16 components at once and two vectors a pass (WebAssembly SIMD,
 * `i32x4.dot_i16x8_s`): a scan of partitions at a twentieth of the CPU of the same loop in JavaScript
 * (300,000 vectors of 100 components in 2.0 ms, where one vector a pass with `extmul` and
 * `extadd_pairwise` took 3.5); and the same for a scan that keeps only the vectors above its floor,
 * each times its scale (`dotsAbove`: the loop in JavaScript over every score, to find the few above,
 * was nearly a third of a scan's time). The module is dot-products.wat, assembled
 * (wabt's `wat2wasm`: `npx --package wabt@1.0.37 wat2wasm dot-products.wat`) into the bytes below.
 */
const MODULE = Uint8Array.from(atob('AGFzbQEAAAABGQJgB39/f39/f38AYAp/f39/f39/fH9/AX8CDwEDZW52Bm1lbW9yeQIAAQMDAgABBxgCCGRvdHNGcm9tAAAJZG90c0Fib3ZlAAEK9AcCrgMCBH8HeyAFIAIgBmxqIQggBCADQQJ0aiEHIAFBBHQhCgJAA0AgBEEIaiAHSw0B/QwAAAAAAAAAAAAAAAAAAAAAIQv9DAAAAAAAAAAAAAAAAAAAAAAhDEEAIQkDQCAAIAlq/QAEACENIA39hwEhDiAN/YgBIQ8gCCAJav0ABAAhECAIIAZqIAlq/QAEACERIAsgEP2HASAO/boBIBD9iAEgD/26Af2uAf2uASELIAwgEf2HASAO/boBIBH9iAEgD/26Af2uAf2uASEMIAlBEGohCSAJIApJDQALIAQgC/0bACAL/RsBaiAL/RsCIAv9GwNqajYCACAEIAz9GwAgDP0bAWogDP0bAiAM/RsDamo2AgQgBEEIaiEEIAggBkEBdGohCAwACwsgBCAHSQRA/QwAAAAAAAAAAAAAAAAAAAAAIQtBACEJA0AgACAJav0ABAAhDSAIIAlq/QAEACEQIAsgEP2HASAN/YcB/boBIBD9iAEgDf2IAf26Af2uAf2uASELIAlBEGohCSAJIApJDQALIAQgC/0bACAL/RsBaiAL/RsCIAv9GwNqajYCAAsLwQQDBX8BfAd7IAQgAiAFbGohCiABQQR0IQ4CQANAIAtBAmogA0sNAf0MAAAAAAAAAAAAAAAAAAAAACEQ/QwAAAAAAAAAAAAAAAAAAAAAIRFBACENA0AgACANav0ABAAhEiAS/YcBIRMgEv2IASEUIAogDWr9AAQAIRUgCiAFaiANav0ABAAhFiAQIBX9hwEgE/26ASAV/YgBIBT9ugH9rgH9rgEhECARIBb9hwEgE/26ASAW/YgBIBT9ugH9rgH9rgEhESANQRBqIQ0gDSAOSQ0ACyAQ/RsAIBD9GwFqIBD9GwIgEP0bA2pqtyAKIAZqKgIAu6IhDyAPIAdkBEAgCCAMQQJ0aiALNgIAIAkgDEEDdGogDzkDACAMQQFqIQwLIBH9GwAgEf0bAWogEf0bAiAR/RsDamq3IAogBWogBmoqAgC7oiEPIA8gB2QEQCAIIAxBAnRqIAtBAWo2AgAgCSAMQQN0aiAPOQMAIAxBAWohDAsgC0ECaiELIAogBUEBdGohCgwACwsgCyADSQRA/QwAAAAAAAAAAAAAAAAAAAAAIRBBACENA0AgACANav0ABAAhEiAKIA1q/QAEACEVIBAgFf2HASAS/YcB/boBIBX9iAEgEv2IAf26Af2uAf2uASEQIA1BEGohDSANIA5JDQALIBD9GwAgEP0bAWogEP0bAiAQ/RsDamq3IAogBmoqAgC7oiEPIA8gB2QEQCAIIAxBAnRqIAs2AgAgCSAMQQN0aiAPOQMAIAxBAWohDAsLIAwL'), (character) => character.charCodeAt(0))

/** Computes, for the `count` Int8 vectors from `base + first * stride` on (a partition's), each dotted with the query at `query` (`chunks` of 16 bytes, zero past its dimensions), as Int32 at `out`. */
export type DotProductsFrom = (query: number, chunks: number, first: number, count: number, out: number, base: number, stride: number) => void

/**
 * `DotProductsFrom` times each vector's scale (a Float32 at `scaleOffset` in its record), as a
 * JavaScript Int32 by Float32 product: of those above `floor`, writes the index among the `count`
 * (Int32, at `indices`) and the score (Float64, at `scores`), in order; returns how many.
 */
export type DotProductsAbove = (query: number, chunks: number, first: number, count: number, base: number, stride: number, scaleOffset: number, floor: number, indices: number, scores: number) => number

let compiled: WebAssembly.Module | undefined

/** The kernels over `memory` (compiled once; instantiated for each memory). */
export function dotProductsOver(memory: WebAssembly.Memory): { dotsFrom: DotProductsFrom; dotsAbove: DotProductsAbove } {
  compiled ??= new WebAssembly.Module(MODULE)
  const { exports } = new WebAssembly.Instance(compiled, { env: { memory } })
  return { dotsFrom: exports.dotsFrom as DotProductsFrom, dotsAbove: exports.dotsAbove as DotProductsAbove }
}
