import type { Insertable, Kysely } from 'kysely'
import type { ChangesTable, EntitiesTable, RegistryDatabase } from './schema.js'

export type EntityWrite = Insertable<EntitiesTable>
export type ChangeWrite = Insertable<ChangesTable>

/**
 * How a store writes a transaction's rows at its end, many a statement: what makes an import run
 * at a hand-written loader's pace (bench/import.mjs), where a statement a row spent most of its
 * time building and sending queries.
 */
export interface BulkWrites {
  /**
   * Inserts or replaces entity rows, at most one per id. With `keepPrivate`, an existing row keeps
   * its private snapshot (the rows' own are then unused).
   */
  upsertEntities(connection: Kysely<RegistryDatabase>, rows: EntityWrite[], keepPrivate: boolean): Promise<void>
  /** Appends change rows; their sequence numbers follow the order of `rows`. */
  insertChanges(connection: Kysely<RegistryDatabase>, rows: ChangeWrite[]): Promise<void>
}

/** The entity columns in the order the bulk statements bind them. */
export const ENTITY_WRITE_COLUMNS = [
  'id',
  'state',
  'merged_into',
  'type',
  'title',
  'name',
  'display_date',
  'jurisdiction',
  'local_identifier',
  'local_type',
  'authority',
  'status',
  'snapshot',
  'private_snapshot',
  'resource',
] as const satisfies readonly (keyof EntitiesTable)[]

/** The change columns in the order the bulk statements bind them (`seq` is assigned). */
export const CHANGE_WRITE_COLUMNS = [
  'entity_id',
  'change_type',
  'changed_keys',
  'merged_into',
  'recorded_at',
  'type',
  'title',
  'name',
  'display_date',
  'jurisdiction',
  'local_identifier',
  'local_type',
  'authority',
  'status',
  'previous_type',
  'previous_title',
  'previous_name',
  'previous_display_date',
  'previous_jurisdiction',
  'previous_local_identifier',
  'previous_local_type',
  'previous_authority',
  'previous_status',
  'snapshot',
] as const satisfies readonly Exclude<keyof ChangesTable, 'seq'>[]

/** The columns an upsert sets on an existing row. */
export function updatedColumns(keepPrivate: boolean): readonly string[] {
  return ENTITY_WRITE_COLUMNS.filter((column) => column !== 'id' && !(keepPrivate && column === 'private_snapshot'))
}
