/**
 * The dot products of Int8 vectors, 16 components at once (WebAssembly SIMD): a scan of partitions
 * at a tenth of the CPU of the same loop in JavaScript. The module is dot-products.wat, assembled
 * (wabt's `wat2wasm --enable-simd`, or its npm package's `parseWat(...).toBinary()`) into the bytes below.
 */
const MODULE = Uint8Array.from(atob('AGFzbQEAAAABCwFgB39/f39/f38AAg8BA2VudgZtZW1vcnkCAAEDAgEABwgBBGRvdHMAAAq6AQG3AQIDfwN7IAIgA0ECdGohBwJAA0AgAiAHTw0BIAUgAigCACAGbGohCP0MAAAAAAAAAAAAAAAAAAAAACEKQQAhCQNAIAggCUEEdGr9AAQAIQsgACAJQQR0av0ABAAhDCAKIAsgDP2cAf1+IAsgDP2dAf1+/a4B/a4BIQogCUEBaiEJIAkgAUkNAAsgBCAK/RsAIAr9GwFqIAr9GwIgCv0bA2pqNgIAIARBBGohBCACQQRqIQIMAAsLCw=='), (character) => character.charCodeAt(0))

/** Computes, for `count` positions listed (Uint32) at `positions`, the Int8 vector at `base + position * stride` dotted with the query at `query` (`chunks` of 16 bytes, zero past its dimensions), as Int32 at `out`. */
export type DotProducts = (query: number, chunks: number, positions: number, count: number, out: number, base: number, stride: number) => void

let compiled: WebAssembly.Module | undefined

/** The kernel over `memory` (compiled once; instantiated for each memory). */
export function dotProductsOver(memory: WebAssembly.Memory): DotProducts {
  compiled ??= new WebAssembly.Module(MODULE)
  return new WebAssembly.Instance(compiled, { env: { memory } }).exports.dots as DotProducts
}
