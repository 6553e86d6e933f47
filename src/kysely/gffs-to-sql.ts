import { expressionBuilder, type Expression, type ExpressionWrapper, type SqlBool } from 'kysely'
import { foldCase } from '../gffs/evaluate.js'
import type { ContractField } from '../contract/fields.js'
import type { Qualifier } from '../gffs/types.js'
import { CONTRACT_COLUMNS } from '../contract/fields.js'
import type { ContractColumn, ContractColumns } from './schema.js'
import type { SqlDialect } from './sql-dialect.js'

// Both filtered tables carry the contract columns; references compile unqualified.
const eb = expressionBuilder<{ filtered: ContractColumns }, 'filtered'>()
type FilterColumn = ExpressionWrapper<{ filtered: ContractColumns }, 'filtered', string | null>

/**
 * The qualifiers of a GFFS query as one SQL condition that agrees with `matchesQualifiers`.
 * Column names come only from CONTRACT_COLUMNS or PREVIOUS_CONTRACT_COLUMNS (`columns`: where each
 * field is held); every value is a bound parameter.
 */
export function qualifiersToSql(
  qualifiers: readonly Qualifier[],
  dialect: SqlDialect,
  columns: Readonly<Record<ContractField, string>> = CONTRACT_COLUMNS,
): Expression<SqlBool> {
  return eb.and(qualifiers.map((qualifier) => qualifierToSql(qualifier, dialect, columns)))
}

function qualifierToSql(qualifier: Qualifier, dialect: SqlDialect, columns: Readonly<Record<ContractField, string>>): Expression<SqlBool> {
  // Typed as a contract column: both column sets are text columns of the filtered table.
  const column = eb.ref(columns[qualifier.field] as ContractColumn)
  const present = eb(column, 'is not', null)
  const conditions = valueConditions(qualifier, column, dialect)
  // A missing field (NULL) never matches: an open range still needs the field to be present.
  const positive = conditions.length === 0 ? present : eb.and(conditions)
  // NOT alone would turn NULL into NULL (no match); the negation must keep entities without the field.
  return qualifier.negated ? eb.not(eb.and([present, positive])) : positive
}

/** The comparisons a present value must pass; none for an open range. */
function valueConditions(qualifier: Qualifier, column: FilterColumn, dialect: SqlDialect): Expression<SqlBool>[] {
  switch (qualifier.op) {
    case 'eq':
      // `in ()` is not SQL; no values match nothing, as `[].includes` does.
      return [qualifier.values.length > 0 ? eb(column, 'in', qualifier.values) : eb.or([])]
    case 'contains':
      return [eb.or(qualifier.values.map((needle) => dialect.containsFolded(column, foldCase(needle))))]
    case 'gt':
      return [eb(column, '>', qualifier.value)]
    case 'gte':
      return [eb(column, '>=', qualifier.value)]
    case 'lt':
      return [eb(column, '<', qualifier.value)]
    case 'lte':
      return [eb(column, '<=', qualifier.value)]
    case 'range':
      return [
        ...(qualifier.from === null ? [] : [eb(column, '>=', qualifier.from)]),
        ...(qualifier.to === null ? [] : [eb(column, '<=', qualifier.to)]),
      ]
  }
}
