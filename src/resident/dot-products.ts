/**
 * The dot products of Int8 vectors, 16 components at once (WebAssembly SIMD): a scan of partitions
 * at a tenth of the CPU of the same loop in JavaScript. The module is dot-products.wat, assembled
 * (wabt's `wat2wasm --enable-simd`, or its npm package's `parseWat(...).toBinary()`) into the bytes below.
 */
const MODULE = Uint8Array.from(atob('AGFzbQEAAAABCwFgB39/f39/f38AAg8BA2VudgZtZW1vcnkCAAEDAwIAAAcTAgRkb3RzAAAIZG90c0Zyb20AAQrwAgK3AQIDfwN7IAIgA0ECdGohBwJAA0AgAiAHTw0BIAUgAigCACAGbGohCP0MAAAAAAAAAAAAAAAAAAAAACEKQQAhCQNAIAggCUEEdGr9AAQAIQsgACAJQQR0av0ABAAhDCAKIAsgDP2cAf1+IAsgDP2dAf1+/a4B/a4BIQogCUEBaiEJIAkgAUkNAAsgBCAK/RsAIAr9GwFqIAr9GwIgCv0bA2pqNgIAIARBBGohBCACQQRqIQIMAAsLC7QBAgN/A3sgBSACIAZsaiEIIAQgA0ECdGohBwJAA0AgBCAHTw0B/QwAAAAAAAAAAAAAAAAAAAAAIQpBACEJA0AgCCAJQQR0av0ABAAhCyAAIAlBBHRq/QAEACEMIAogCyAM/ZwB/X4gCyAM/Z0B/X79rgH9rgEhCiAJQQFqIQkgCSABSQ0ACyAEIAr9GwAgCv0bAWogCv0bAiAK/RsDamo2AgAgBEEEaiEEIAggBmohCAwACwsL'), (character) => character.charCodeAt(0))

/** Computes, for `count` positions listed (Uint32) at `positions`, the Int8 vector at `base + position * stride` dotted with the query at `query` (`chunks` of 16 bytes, zero past its dimensions), as Int32 at `out`. */
export type DotProducts = (query: number, chunks: number, positions: number, count: number, out: number, base: number, stride: number) => void
/** The same for the `count` vectors from position `first` on (a partition's): no list to write and read. */
export type DotProductsFrom = (query: number, chunks: number, first: number, count: number, out: number, base: number, stride: number) => void

let compiled: WebAssembly.Module | undefined

/** The kernels over `memory` (compiled once; instantiated for each memory). */
export function dotProductsOver(memory: WebAssembly.Memory): { dots: DotProducts; dotsFrom: DotProductsFrom } {
  compiled ??= new WebAssembly.Module(MODULE)
  const { exports } = new WebAssembly.Instance(compiled, { env: { memory } })
  return { dots: exports.dots as DotProducts, dotsFrom: exports.dotsFrom as DotProductsFrom }
}
