import { stemmer } from 'stemmer'
import type { PublicSnapshot } from '../contract/entity.js'

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

/** What the vector embeds: the descriptive fields (names and identifiers are left to full text). */
export function embeddedTextOf(snapshot: PublicSnapshot): string {
  return [snapshot.title, snapshot.localType, snapshot.authority].filter((part) => part !== undefined).join('. ')
}

/** Whether `tokens` hold `phrase` (its tokens in a row). */
export function containsPhrase(tokens: readonly string[], phrase: readonly string[]): boolean {
  if (phrase.length === 0) return false
  for (let start = 0; start + phrase.length <= tokens.length; start++) {
    if (phrase.every((token, offset) => tokens[start + offset] === token)) return true
  }
  return false
}
