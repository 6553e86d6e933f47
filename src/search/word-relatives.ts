import type { QueryWord } from '../ports/search-index.js'
import { queryWord } from './text.js'

/**
 * Words and collocations to the words of their WordNet relatives (synonyms, hypernyms), all as
 * `tokenize` makes tokens; a collocation's key is its tokens joined by a space. Every common word is
 * a key, function words with no relatives: a word that is none is a name.
 */
export interface WordRelatives {
  /** The relatives of a key, none (an empty list) for a function word, undefined for what is no key. */
  of(key: string): readonly string[] | undefined
}

/** The longest collocation a key holds (assets/wordnet/relatives.txt.gz). */
const MOST_WORDS = 3

/**
 * Reads `key<TAB>relative relative ...` lines sorted by key as JavaScript compares strings (the
 * format of assets/wordnet/relatives.txt.gz, decompressed). The text is kept as it is and searched by
 * halves: it loads in 0.1 s and 6 MB, where a map of the keys to their relatives took 0.9 s and
 * 33 MB more (bench/README.md, "Words widened by WordNet").
 */
export function parseWordRelatives(text: string): WordRelatives {
  const starts: number[] = []
  for (let start = 0; start < text.length; ) {
    starts.push(start)
    const end = text.indexOf('\n', start)
    start = end === -1 ? text.length : end + 1
  }
  const keyAt = (line: number) => text.slice(starts[line], text.indexOf('\t', starts[line]))
  return {
    of(key) {
      let low = 0
      let high = starts.length - 1
      while (low <= high) {
        const middle = (low + high) >>> 1
        const found = keyAt(middle)
        if (found === key) {
          const tab = starts[middle]! + key.length + 1
          const end = text.indexOf('\n', tab)
          return text.slice(tab, end === -1 ? text.length : end).split(' ').filter((token) => token !== '')
        }
        if (found < key) low = middle + 1
        else high = middle - 1
      }
      return undefined
    },
  }
}

/**
 * The typed tokens' relatives, as words for full text (matched as tokens, not as names: a name's
 * relatives would be other names), none of them typed; none when a typed word is no common word
 * (`Eiffel Tower` asks for a name the data does not hold, not for a structure). The longest
 * collocation of the typed tokens is taken before its words (`commander in chief`, not `chief`).
 */
export function relativesOf(tokens: readonly string[], relatives: WordRelatives): QueryWord[] {
  const found = new Set<string>()
  for (let start = 0; start < tokens.length; ) {
    let taken = 0
    for (let size = Math.min(MOST_WORDS, tokens.length - start); size >= 1 && taken === 0; size--) {
      const related = relatives.of(tokens.slice(start, start + size).join(' '))
      if (related === undefined) continue
      for (const token of related) found.add(token)
      taken = size
    }
    if (taken === 0) return []
    start += taken
  }
  return [...found].filter((token) => !tokens.includes(token)).map((token) => queryWord(token))
}
