import { CONTRACT_COLUMNS } from '../contract/fields.js'
import type { Qualifier } from '../gffs/types.js'

/** The one quoting helper: a SQL string literal (DataFusion: a quote doubles). */
export function sqlString(value: string): string {
  return `'${value.replaceAll("'", "''")}'`
}

/** A filter on the id column for these ids (each quoted by `sqlString`). */
export function idIn(ids: readonly string[]): string {
  return `id IN (${ids.map(sqlString).join(', ')})`
}

/**
 * Qualifiers as a LanceDB `where` prefilter that keeps at least every matching row: `~` (whose case
 * folding must be JS's) is left to the exact check that follows (`matchesQualifiers`). Null when
 * nothing narrows.
 */
export function prefilterOf(qualifiers: readonly Qualifier[]): string | null {
  const conditions = qualifiers.flatMap((qualifier) => {
    const positive = positiveCondition(qualifier)
    if (positive === null) return []
    const column = CONTRACT_COLUMNS[qualifier.field]
    // A missing field (NULL) never matches a positive qualifier, so it always matches the negation.
    return [qualifier.negated ? `(${column} IS NULL OR NOT (${positive}))` : `(${positive})`]
  })
  return conditions.length === 0 ? null : conditions.join(' AND ')
}

/** The qualifiers that `prefilterOf` leaves out (`~`): the exact check after it needs their columns, no others. */
export function residualOf(qualifiers: readonly Qualifier[]): Qualifier[] {
  return qualifiers.filter((qualifier) => positiveCondition(qualifier) === null)
}

function positiveCondition(qualifier: Qualifier): string | null {
  const column = CONTRACT_COLUMNS[qualifier.field]
  switch (qualifier.op) {
    case 'eq':
      return qualifier.values.length === 0 ? 'FALSE' : `${column} IN (${qualifier.values.map(sqlString).join(', ')})`
    case 'contains':
      return null
    case 'gt':
      return `${column} > ${sqlString(qualifier.value)}`
    case 'gte':
      return `${column} >= ${sqlString(qualifier.value)}`
    case 'lt':
      return `${column} < ${sqlString(qualifier.value)}`
    case 'lte':
      return `${column} <= ${sqlString(qualifier.value)}`
    case 'range': {
      const bounds = [
        ...(qualifier.from === null ? [] : [`${column} >= ${sqlString(qualifier.from)}`]),
        ...(qualifier.to === null ? [] : [`${column} <= ${sqlString(qualifier.to)}`]),
      ]
      return bounds.length === 0 ? `${column} IS NOT NULL` : bounds.join(' AND ')
    }
  }
}
