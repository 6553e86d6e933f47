import { expressionBuilder, sql, type Expression, type ExpressionWrapper, type SqlBool } from 'kysely'
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

/**
 * A keyset page's seek (`planFilter`'s: equalities of one value each, which one `(columns…, id)`
 * index answers exactly) and cursor as a condition, and the columns to order by before `id`.
 *
 * Where the dialect hides a page's values from the planner (PostgreSQL), each value is a
 * sub-select, and the seek's last column a range of one value (from the cursor on, if any) ordered
 * by the index's columns: the statement then gets one plan a connection, the same for every value,
 * which only an index on the seek's columns serves. With the values bound as they are, PostgreSQL
 * planned the page anew on every call (its custom plans, made for the values, are estimated a
 * little cheaper than its generic plan, though they are the same plan: 340 against 352 for
 * `type:person jurisdiction:US-WA` at 300,000 entities), and planning cost as much as running it.
 * An equality on every column would let a plan made without the values walk the id index and
 * filter (for `type` alone it does), and a value that matches nothing read the table; a range on
 * every column (a row comparison) would not stop the index scan at the seek's end but at the
 * first column's.
 */
export function seekToSql(seek: readonly Qualifier[], cursor: string | null, dialect: SqlDialect): { condition: Expression<SqlBool>; order: ContractColumn[] } {
  const afterCursor = cursor === null ? [] : [sql<SqlBool>`${sql.ref('id')} > ${dialect.hiddenValue(cursor)}`]
  if (!dialect.hidesSeekValues || seek.length === 0) return { condition: eb.and([qualifiersToSql(seek, dialect), ...afterCursor]), order: [] }
  const columns = seek.map((qualifier) => CONTRACT_COLUMNS[qualifier.field] as ContractColumn)
  const values = seek.map(seekValueOf)
  const last = columns.length - 1
  const lastColumn = sql.ref(columns[last]!)
  const lastValue = () => dialect.hiddenValue(values[last]!)
  const equalities = columns.slice(0, last).map((column, index) => eb(eb.ref(column), '=', dialect.hiddenValue(values[index]!)))
  const from =
    cursor === null
      ? sql<SqlBool>`${lastColumn} >= ${lastValue()}`
      : sql<SqlBool>`(${lastColumn}, ${sql.ref('id')}) > (${lastValue()}, ${dialect.hiddenValue(cursor)})`
  return { condition: eb.and([...equalities, from, sql<SqlBool>`${lastColumn} <= ${lastValue()}`]), order: columns }
}

function seekValueOf(qualifier: Qualifier): string {
  if (qualifier.op !== 'eq' || qualifier.negated || qualifier.values.length !== 1) throw new Error(`a seek is an equality of one value, not ${JSON.stringify(qualifier)}`)
  return qualifier.values[0]!
}
