import type { Insertable, Kysely } from 'kysely'
import { CONTRACT_COLUMNS } from '../contract/fields.js'
import { PREVIOUS_CONTRACT_COLUMNS, type ChangesTable, type EntitiesTable, type RegistryDatabase } from './schema.js'

export type EntityWrite = Insertable<EntitiesTable>
export type ChangeWrite = Insertable<ChangesTable>

/**
 * How a store writes a transaction's rows at its end, many a statement: what makes an import run
 * at a hand-written loader's pace (bench/import.mjs), where a statement a row spent most of its
 * time building and sending queries.
 */
export interface BulkWrites {
  /**
   * Writes a transaction's rows: inserts or replaces `entities` and `keepingPrivate` (at most one
   * row per id in all; an existing row of `keepingPrivate` keeps its private snapshot, the rows' own
   * unused), and appends `changes`, whose sequence numbers follow their order.
   */
  writeRows(connection: Kysely<RegistryDatabase>, rows: TransactionRows): Promise<void>
  /** Adds ids to a table of one `id` primary key column; one it has already is left. */
  insertIds(connection: Kysely<RegistryDatabase>, table: string, ids: string[]): Promise<void>
}

export interface TransactionRows {
  entities: EntityWrite[]
  keepingPrivate: EntityWrite[]
  changes: ChangeWrite[]
}

/** The entity columns in the order the bulk statements bind them. */
export const ENTITY_WRITE_COLUMNS: readonly (keyof EntitiesTable)[] = [
  'id',
  'state',
  'merged_into',
  ...Object.values(CONTRACT_COLUMNS),
  'snapshot',
  'private_snapshot',
  'resource',
]

/** The change columns in the order the bulk statements bind them (`seq` is assigned). */
export const CHANGE_WRITE_COLUMNS: readonly Exclude<keyof ChangesTable, 'seq'>[] = [
  'entity_id',
  'change_type',
  'changed_keys',
  'merged_into',
  'recorded_at',
  ...Object.values(CONTRACT_COLUMNS),
  ...Object.values(PREVIOUS_CONTRACT_COLUMNS),
  'snapshot',
]

/** The columns an upsert sets on an existing row. */
export function updatedColumns(keepPrivate: boolean): readonly string[] {
  return ENTITY_WRITE_COLUMNS.filter((column) => column !== 'id' && !(keepPrivate && column === 'private_snapshot'))
}
