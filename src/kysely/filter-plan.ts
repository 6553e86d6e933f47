import { CONTRACT_COLUMNS, type ContractField } from '../contract/fields.js'
import type { Qualifier } from '../gffs/types.js'
import { ENTITY_FILTER_INDEXES } from './schema.js'

/**
 * How a list request reads a filter: `seek` qualifiers an index answers exactly (the candidates, in
 * id order), and `residual` ones checked row by row on those candidates. A filter with residual
 * qualifiers scans a bounded window of candidates per request, so no filter can make one request
 * read the whole table: a sparse match gives a short (even empty) page whose cursor moves past the
 * window, as the change feed does.
 */
export interface FilterPlan {
  seek: Qualifier[]
  residual: Qualifier[]
  /** Candidate rows one request may check: fewer for a filter that costs more per row. */
  window: number
}

const FIELD_OF_COLUMN = new Map(Object.entries(CONTRACT_COLUMNS).map(([field, column]) => [column as string, field as ContractField]))

/** The fields of each `(columns…, id)` index over canonical entities (migrations.ts), in order of preference. */
export const SEEKABLE_FIELDS: readonly (readonly ContractField[])[] = ENTITY_FILTER_INDEXES.map((columns) => columns.map((column) => FIELD_OF_COLUMN.get(column)!))

/**
 * Per-row costs in units of about 0.3 us, measured on SQLite at 1,000,000 entities
 * (bench/worst-filter.mjs): reading a row in id order costs ~1.2 us, through a secondary index
 * ~4 us (a table lookup each), a `~` value ~0.3 us more (the JS case folding `er_fold` runs per
 * value per row), rounded up.
 */
const ROW_COST = { row: 4, indexedRow: 13, equals: 1, compare: 1, contains: 1.5 } as const
/** Units one request may spend: about 12 ms on this project's 2-core bench machine. */
const BUDGET = 40_000
/** Even the costliest filter checks this many rows a request (unless the store's maximum is lower). */
const MIN_WINDOW = 100

export function planFilter(qualifiers: readonly Qualifier[], maxWindow: number): FilterPlan {
  const seek = chooseSeek(qualifiers)
  const residual = qualifiers.filter((qualifier) => !seek.includes(qualifier))
  return { seek, residual, window: windowFor(residual, maxWindow, { viaIndex: seek.length > 0 }) }
}

/**
 * Rows one request may check against `qualifiers`. `passes`: how often each row is checked;
 * `viaIndex`: the rows are reached through a secondary index, one table lookup each.
 */
export function windowFor(qualifiers: readonly Qualifier[], maxWindow: number, { passes = 1, viaIndex = false } = {}): number {
  const base = viaIndex ? ROW_COST.indexedRow : ROW_COST.row
  const cost = base + passes * qualifiers.reduce((sum, qualifier) => sum + costOf(qualifier), 0)
  return Math.min(maxWindow, Math.max(MIN_WINDOW, Math.floor(BUDGET / cost)))
}

/** One index walk: the first index all of whose fields the filter asks equal to one value. */
function chooseSeek(qualifiers: readonly Qualifier[]): Qualifier[] {
  const seekable = (field: ContractField) =>
    qualifiers.find((qualifier) => qualifier.field === field && !qualifier.negated && qualifier.op === 'eq' && qualifier.values.length === 1)
  for (const fields of SEEKABLE_FIELDS) {
    const seek = fields.map(seekable)
    if (seek.every((qualifier) => qualifier !== undefined)) return seek
  }
  return []
}

function costOf(qualifier: Qualifier): number {
  switch (qualifier.op) {
    case 'eq':
      return ROW_COST.equals * Math.max(1, qualifier.values.length)
    case 'contains':
      return ROW_COST.contains * qualifier.values.length
    case 'range':
      return ROW_COST.compare * 2
    default:
      return ROW_COST.compare
  }
}
