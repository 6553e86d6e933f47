import { describe, expect, it } from 'vitest'
import { dotProductsOver } from '../../src/resident/dot-products.js'

/** Int8 vectors of `dimensions` from a fixed sequence, one after the other at `base`, a query at 0 (zero past its dimensions). */
function laidOut(memory: WebAssembly.Memory, dimensions: number, count: number, base: number) {
  const bytes = new Int8Array(memory.buffer)
  let state = 7
  const next = () => ((state = (state * 48271) % 2147483647) % 255) - 127
  for (let component = 0; component < dimensions; component++) bytes[component] = next()
  for (let at = 0; at < count * dimensions; at++) bytes[base + at] = next()
  const expected = Array.from({ length: count }, (_, vector) => {
    let sum = 0
    for (let component = 0; component < dimensions; component++) sum += bytes[component]! * bytes[base + vector * dimensions + component]!
    return sum
  })
  return expected
}

describe('the Int8 dot product kernel', () => {
  const dimensions = 100
  const chunks = Math.ceil(dimensions / 16)
  const count = 1000
  const [out, base] = [8192, 16384]

  it('computes every product of the vectors in a row, in order, from the first asked', () => {
    const memory = new WebAssembly.Memory({ initial: 4 })
    const expected = laidOut(memory, dimensions, count, base)
    const { dotsFrom } = dotProductsOver(memory)
    const first = 100
    dotsFrom(0, chunks, first, count - first, out, base, dimensions)
    expect(Array.from(new Int32Array(memory.buffer, out, count - first))).toEqual(expected.slice(first))
  })

  it('computes an odd count (two vectors a pass, the last alone) and the extremes of Int8 exactly', () => {
    const memory = new WebAssembly.Memory({ initial: 4 })
    const expected = laidOut(memory, dimensions, count, base)
    const { dotsFrom } = dotProductsOver(memory)
    for (const asked of [1, 2, 3, 7]) {
      dotsFrom(0, chunks, 0, asked, out, base, dimensions)
      expect(Array.from(new Int32Array(memory.buffer, out, asked))).toEqual(expected.slice(0, asked))
    }
    // Every component -128, the query's too: each product 16,384, their sum 1,638,400.
    new Int8Array(memory.buffer).fill(-128, 0, dimensions).fill(-128, base, base + 3 * dimensions)
    dotsFrom(0, chunks, 0, 3, out, base, dimensions)
    expect(Array.from(new Int32Array(memory.buffer, out, 3))).toEqual([1_638_400, 1_638_400, 1_638_400])
  })

  it('keeps, of records (components, then their scale), those whose product times their scale beats the floor: their indices and scores as JavaScript computes them', () => {
    const memory = new WebAssembly.Memory({ initial: 4 })
    // Records of 104 bytes: 100 components, then a Float32 scale.
    const stride = 104
    const bytes = new Int8Array(memory.buffer)
    const floats = new Float32Array(memory.buffer)
    let state = 11
    const next = () => (state = (state * 48271) % 2147483647)
    for (let component = 0; component < dimensions; component++) bytes[component] = (next() % 255) - 127
    const records = 301
    const scores = Array.from({ length: records }, (_, record) => {
      let sum = 0
      for (let component = 0; component < dimensions; component++) sum += bytes[component]! * (bytes[base + record * stride + component] = (next() % 255) - 127)
      floats[(base + record * stride + dimensions) >> 2] = (next() % 1000) / 7e5
      return sum * floats[(base + record * stride + dimensions) >> 2]!
    })
    const { dotsAbove } = dotProductsOver(memory)
    const [indices, scored] = [8192, 4096]
    for (const [first, count] of [[0, records], [5, 1], [5, 2], [10, 201]] as const) {
      for (const floor of [-Infinity, 0, 3]) {
        const above = dotsAbove(0, chunks, first, count, base, stride, dimensions, floor, indices, scored)
        const expected = scores.slice(first, first + count).flatMap((score, index) => (score > floor ? [[index, score]] : []))
        const found = Array.from(new Int32Array(memory.buffer, indices, above), (index, at) => [index, new Float64Array(memory.buffer, scored, above)[at]!])
        expect(found, `${first} ${count} ${floor}`).toEqual(expected)
      }
    }
    expect(dotsAbove(0, chunks, 0, records, base, stride, dimensions, Infinity, indices, scored)).toBe(0)
  })
})
