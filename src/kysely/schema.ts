import type { Generated } from 'kysely'
import type { ChangeType, EntityState, PublicSnapshot } from '../contract/entity.js'
import { CONTRACT_COLUMNS, CONTRACT_FIELDS, type ContractField } from '../contract/fields.js'

export type ContractColumn = (typeof CONTRACT_COLUMNS)[ContractField]

/** The column of a change that holds a contract field's value before the change (`filterScope=either`). */
export const PREVIOUS_CONTRACT_COLUMNS = Object.fromEntries(
  Object.entries(CONTRACT_COLUMNS).map(([field, column]) => [field, `previous_${column}`]),
) as { [F in ContractField]: `previous_${(typeof CONTRACT_COLUMNS)[F]}` }

export type PreviousContractColumns = { [C in ContractColumn as `previous_${C}`]: string | null }

/** One nullable text column per contract field: what filters compile against. */
export type ContractColumns = { [C in ContractColumn]: string | null }

export interface EntitiesTable extends ContractColumns {
  id: string
  state: EntityState
  merged_into: string | null
  /** The public snapshot as JSON text. */
  snapshot: string
  /** The whole warehouse record but `id`, as JSON text; never exposed. */
  private_snapshot: string
  /** A canonical entity's resource as `renderEntityResource` renders it (what a list page serves); null otherwise. */
  resource: string | null
}

export interface ChangesTable extends ContractColumns, PreviousContractColumns {
  /** Feed order; `pg` returns a bigint as a string. */
  seq: Generated<number | string>
  entity_id: string
  change_type: ChangeType
  /** JSON array of top-level public keys. */
  changed_keys: string
  merged_into: string | null
  /** ISO 8601, as the warehouse recorded it. */
  recorded_at: string
  /** The post-change public snapshot as JSON text. */
  snapshot: string
}

export interface ApiKeysTable {
  /** SHA-256 of the key, hex. */
  key_hash: string
  /** The key's public id; unique. */
  id: string
  org: string
  label: string | null
  created_at: string
  expires_at: string | null
  last_used_at: string | null
  revoked_at: string | null
}

export interface OrganizationsTable {
  name: string
  created_at: string
}

export interface RegistryDatabase {
  entities: EntitiesTable
  changes: ChangesTable
  api_keys: ApiKeysTable
  organizations: OrganizationsTable
}

/** The previous-snapshot columns of a change; rows written before they existed hold nulls. */
export function previousContractColumnValues(snapshot: PublicSnapshot): PreviousContractColumns {
  const values = {} as Record<string, string | null>
  for (const field of CONTRACT_FIELDS) values[PREVIOUS_CONTRACT_COLUMNS[field]] = snapshot[field] ?? null
  return values as PreviousContractColumns
}

/** The contract-field columns of a snapshot, for filtering in SQL. */
export function contractColumnValues(snapshot: PublicSnapshot): ContractColumns {
  const values = {} as ContractColumns
  for (const field of CONTRACT_FIELDS) values[CONTRACT_COLUMNS[field]] = snapshot[field] ?? null
  return values
}

/**
 * Equality-filterable columns that get a `(column, id)` index over canonical entities, so that a
 * filtered keyset page reads only matching rows; `[type, jurisdiction]` serves the common pair.
 * In the order a list's filter prefers to seek them (filter-plan.ts): both of the pair, then the
 * column of the fewest rows a value. The search index inside PostgreSQL indexes the same columns
 * for its prefilters.
 */
export const ENTITY_FILTER_INDEXES: readonly (readonly ContractColumn[])[] = [
  ['type', 'jurisdiction'],
  ['jurisdiction'],
  ['local_type'],
  ['authority'],
  ['status'],
  ['type'],
]
