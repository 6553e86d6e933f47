import { stemmer } from 'stemmer'
import type { PublicSnapshot } from '../contract/entity.js'
import type { NearForm, QueryWord } from '../ports/search-index.js'

const WORD = /[\p{L}\p{N}]+/gu

/**
 * The tokens of a text, as both sides of search and the exclusions see them: words of letters and
 * digits, lowercase, Porter-stemmed (`taxes` and `tax` meet; `taxation` does not).
 */
export function tokenize(text: string): string[] {
  return Array.from(text.toLowerCase().matchAll(WORD), ([word]) => stemmer(word))
}

/** What full-text search reads of an entity: its title, name and local identifier. */
export function fullTextOf(snapshot: PublicSnapshot): string {
  return [snapshot.title, snapshot.name, snapshot.localIdentifier].filter((part) => part !== undefined).join(' \n ')
}

/**
 * What the vector embeds: the descriptive fields (names and identifiers are left to full text): the
 * title and the authority, and a bill's local type, which says what kind of measure it is; a
 * person's or a committee's names the scheme of its identifier (`bioguide`, `thomas`), noise to the
 * vector. Measured on the relevance set (bench/README.md): leaving the local type out for them gave
 * paraphrases 0.604 to 0.619 and no-answer queries 6.7 results to 4.2; a person's status (`serving`)
 * and the local type of every entity made things worse.
 */
export function embeddedTextOf(snapshot: PublicSnapshot): string {
  const kind = snapshot.type === 'legislation' ? snapshot.localType : undefined
  return [snapshot.title, kind, snapshot.authority].filter((part) => part !== undefined).join('. ')
}

/**
 * The version of `embeddedTextOf`'s recipe, recorded in the index's state beside the embedder: an
 * index whose vectors came from another recipe is rebuilt (`createIndexer`). Raise it whenever the
 * embedded text of any entity changes.
 */
export const EMBEDDED_TEXT_RECIPE = 2

/** Whether `tokens` hold `phrase` (its tokens in a row). */
export function containsPhrase(tokens: readonly string[], phrase: readonly string[]): boolean {
  if (phrase.length === 0) return false
  for (let start = 0; start + phrase.length <= tokens.length; start++) {
    if (phrase.every((token, offset) => tokens[start + offset] === token)) return true
  }
  return false
}

/** A name word as people type it: accents folded (`Velázquez` is `velazquez`), not stemmed (`Adams` is not `Adam`). */
function folded(word: string): string {
  return word.normalize('NFD').replace(/\p{M}/gu, '')
}

/** Words of names: lowercase, accents folded, not stemmed. */
export function nameWords(text: string): string[] {
  return Array.from(text.toLowerCase().matchAll(WORD), ([word]) => folded(word))
}

/** A possessive's `'s` (`Georgia's`): a word apart by `WORD`'s rule, which would match every initial S. */
const POSSESSIVE = /(?<=[\p{L}\p{N}])['’]s(?![\p{L}\p{N}])/gu

/** The typed words of a text, each as the tokens and as the names see it; a possessive's `'s` is not a word. */
export function queryWords(text: string): { token: string; name: string }[] {
  return Array.from(text.toLowerCase().replace(POSSESSIVE, '').matchAll(WORD), ([word]) => ({ token: stemmer(word), name: folded(word) }))
}

/** What the name fields of an entity are: its name and local identifier. */
export function namesOf(snapshot: PublicSnapshot): string[] {
  return nameWords([snapshot.name, snapshot.localIdentifier].filter((part) => part !== undefined).join(' '))
}

/**
 * Edits a typed word may be from an indexed one and still match it, by its length (as Elasticsearch's
 * AUTO, one letter longer each step: short words have too many neighbours): 0 up to 4 letters, 1 up
 * to 7, 2 up to 32. None beyond: no one types such words, and LanceDB's automaton for 2 edits
 * exceeds its size limit from about 50 letters (the search failed).
 */
export function typoAllowance(word: string): 0 | 1 | 2 {
  return word.length <= 4 || word.length > 32 ? 0 : word.length <= 7 ? 1 : 2
}

/**
 * A word as full text looks for it (`QueryWord`): `token`, its stem, near its typo allowance, and its
 * name forms (`names`: the name as typed first, then its other forms; the first matched by its parts
 * too). Given the word as the user `typed` it (lowercase, accents folded), its typos are looked
 * for as typed too; a word search derives (a relative, a place's title) has its token's allowance alone.
 */
export function queryWord(token: string, names: string[] = [], typed?: string): QueryWord {
  const own = typoAllowance(token)
  const near: NearForm[] = own > 0 ? [{ form: token, allowance: own }] : []
  const nameParts = names.slice(0, 1).filter((name) => name.length >= 3)
  if (typed === undefined) return { token, near, nearNames: [], names, nameParts }
  const asTyped = typoAllowance(typed)
  // Two letters swapped: one edit to whoever typed them, two to Levenshtein, and within two edits a
  // swap is found already. Undone and stemmed, a swap finds the stem the right word has.
  if (asTyped === 1) {
    const swaps = new Set(swapsOf(typed).map((swapped) => stemmer(swapped)))
    swaps.delete(token)
    for (const form of swaps) near.push({ form, allowance: 0 })
  }
  return { token, near, nearNames: asTyped > 0 ? [{ form: typed, allowance: asTyped }] : [], names, nameParts }
}

/** `word` with each pair of adjacent letters swapped (`jonhson`: `ojnhson`, `jnohson`, `johnson`...), where they differ; letters as code points, never a surrogate's halves. */
function swapsOf(word: string): string[] {
  const letters = Array.from(word)
  const swaps: string[] = []
  for (let at = 0; at + 1 < letters.length; at++) {
    if (letters[at] !== letters[at + 1]) swaps.push([...letters.slice(0, at), letters[at + 1], letters[at], ...letters.slice(at + 2)].join(''))
  }
  return swaps
}

/** Whether `other` is within a near form's allowance of it. */
export function isNear({ form, allowance }: NearForm, other: string): boolean {
  return allowance === 0 ? form === other : editDistance(form, other, allowance) <= allowance
}

/**
 * How much each kind of full-text match weighs, on both indexes: a typed word that matches a name or
 * an identifier counts above one that matches a title; a near match (a typo) below an exact one; a
 * shared trigram (a prefix, part of a name) least.
 */
export const MATCH_WEIGHTS = { word: 1, nearWord: 0.5, name: 2, nameTrigram: 0.3 } as const

/** The trigrams of a text, spaces included (LanceDB's n-gram tokenizer with 3 to 3). */
export function trigramsOf(text: string): string[] {
  const grams: string[] = []
  for (let start = 0; start + 3 <= text.length; start++) grams.push(text.slice(start, start + 3))
  return grams
}

/** Rows of `editDistance`, reused: search compares every candidate's tokens with the typed ones. */
let previousRow = new Uint32Array(64)
let currentRow = new Uint32Array(64)

/** Levenshtein distance of two words, or `limit + 1` as soon as it is known to exceed `limit`. */
export function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1
  if (a === b) return 0
  if (previousRow.length <= b.length) {
    previousRow = new Uint32Array(b.length + 1)
    currentRow = new Uint32Array(b.length + 1)
  }
  let previous = previousRow
  let current = currentRow
  for (let j = 0; j <= b.length; j++) previous[j] = j
  for (let i = 1; i <= a.length; i++) {
    current[0] = i
    let smallest = i
    for (let j = 1; j <= b.length; j++) {
      const value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1))
      current[j] = value
      if (value < smallest) smallest = value
    }
    if (smallest > limit) return limit + 1
    const swap = previous
    previous = current
    current = swap
  }
  return previous[b.length]!
}

/** Whether an entity's indexed text holds a query word, as full text matches it (`QueryWord`). */
export function matchesWord(word: QueryWord, tokens: readonly string[], names: readonly string[], nameTrigrams: ReadonlySet<string>): boolean {
  if (tokens.some((token) => token === word.token || word.near.some((form) => isNear(form, token)))) return true
  if (names.some((name) => word.nearNames.some((form) => isNear(form, name)))) return true
  return word.names.some((name) => names.includes(name)) || word.nameParts.some((part) => trigramsOf(part).every((gram) => nameTrigrams.has(gram)))
}
