import type { PublicSnapshot } from '../contract/entity.js'
import type { Qualifier } from './types.js'

/**
 * Evaluates qualifiers (ANDed) against a public snapshot, in memory. The SQL compilation in
 * `kysely/` must agree with this function: the property tests hold the two together.
 */
export function matchesQualifiers(qualifiers: readonly Qualifier[], snapshot: PublicSnapshot): boolean {
  return qualifiers.every((qualifier) => matchesQualifier(qualifier, snapshot))
}

function matchesQualifier(qualifier: Qualifier, snapshot: PublicSnapshot): boolean {
  const value = snapshot[qualifier.field]
  // A missing field never matches a positive qualifier, so it always matches the negation.
  const positive = value !== undefined && matchesValue(qualifier, value)
  return qualifier.negated ? !positive : positive
}

function matchesValue(qualifier: Qualifier, value: string): boolean {
  switch (qualifier.op) {
    case 'eq':
      return qualifier.values.includes(value)
    case 'contains': {
      const folded = foldCase(value)
      return qualifier.values.some((needle) => folded.includes(foldCase(needle)))
    }
    case 'gt':
      return compareCodePoints(value, qualifier.value) > 0
    case 'gte':
      return compareCodePoints(value, qualifier.value) >= 0
    case 'lt':
      return compareCodePoints(value, qualifier.value) < 0
    case 'lte':
      return compareCodePoints(value, qualifier.value) <= 0
    case 'range':
      return (
        (qualifier.from === null || compareCodePoints(value, qualifier.from) >= 0) &&
        (qualifier.to === null || compareCodePoints(value, qualifier.to) <= 0)
      )
  }
}

/** The case folding of `~` (contains); the SQL stores register or use the same lowercasing. */
export function foldCase(value: string): string {
  return value.toLowerCase()
}

/** Orders strings by Unicode code point, as SQLite's BINARY and PostgreSQL's "C" collation do. */
export function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length)
  for (let index = 0; index < length; index++) {
    const x = a.charCodeAt(index)
    const y = b.charCodeAt(index)
    if (x === y) continue
    // UTF-16 orders surrogates (astral code points) below U+E000..U+FFFF; code point order does not.
    const xSurrogate = x >= 0xd800 && x <= 0xdfff
    const ySurrogate = y >= 0xd800 && y <= 0xdfff
    if (xSurrogate !== ySurrogate) return xSurrogate ? 1 : -1
    return x - y
  }
  return a.length - b.length
}
