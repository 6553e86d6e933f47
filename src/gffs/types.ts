import type { ContractField } from '../contract/fields.js'

interface QualifierBase {
  kind: 'qualifier'
  field: ContractField
  negated: boolean
}

/** `field:a,b` exact equality, any of the values. */
export interface EqualsQualifier extends QualifierBase {
  op: 'eq'
  values: string[]
}

/** `field:~a,b` case-insensitive substring, any of the values. */
export interface ContainsQualifier extends QualifierBase {
  op: 'contains'
  values: string[]
}

/** `field:>v`, `>=`, `<`, `<=`: string comparison by code point. */
export interface CompareQualifier extends QualifierBase {
  op: 'gt' | 'gte' | 'lt' | 'lte'
  value: string
}

/** `field:a..b` inclusive; `*` (null here) leaves an end open. */
export interface RangeQualifier extends QualifierBase {
  op: 'range'
  from: string | null
  to: string | null
}

export type Qualifier = EqualsQualifier | ContainsQualifier | CompareQualifier | RangeQualifier

/** Free text: a bare word or a quoted phrase; negated means excluded (search only). */
export interface TextTerm {
  kind: 'word' | 'phrase'
  negated: boolean
  text: string
}

export interface GffsQuery {
  /** ANDed together. */
  qualifiers: Qualifier[]
  text: TextTerm[]
}

export const GFFS_LIMITS = { maxLength: 1000, maxTerms: 32, maxValues: 50 } as const
