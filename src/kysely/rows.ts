import type { Insertable, Kysely, Selectable } from 'kysely'
import { encodeChangeId } from '../contract/change-id.js'
import type { PublicSnapshot, StoredChange, StoredEntity } from '../contract/entity.js'
import { renderEntityResource } from '../contract/resource-json.js'
import type { RenderedEntity } from '../ports/entity-store.js'
import type { NewChange } from '../ports/warehouse-backend.js'
import { contractColumnValues, previousContractColumnValues, type ChangesTable, type EntitiesTable, type RegistryDatabase } from './schema.js'

/** What a read of an entity needs; the private snapshot stays in the database. */
const ENTITY_COLUMNS = ['id', 'state', 'merged_into', 'snapshot'] as const
type EntityRow = Pick<Selectable<EntitiesTable>, (typeof ENTITY_COLUMNS)[number]>

/** What a list page needs of a canonical entity: its rendered resource. */
export const PAGE_COLUMNS = ['id', 'resource'] as const

const CHANGE_COLUMNS = [
  'seq',
  'entity_id',
  'change_type',
  'changed_keys',
  'merged_into',
  'recorded_at',
  'snapshot',
] as const
type ChangeRow = Pick<Selectable<ChangesTable>, (typeof CHANGE_COLUMNS)[number]>

export function selectEntities(db: Kysely<RegistryDatabase>) {
  return db.selectFrom('entities').select(ENTITY_COLUMNS)
}

/** An entity as served: with its stored resource, when canonical. */
export function selectServedEntities(db: Kysely<RegistryDatabase>) {
  return db.selectFrom('entities').select([...ENTITY_COLUMNS, 'resource'])
}

export function selectChanges(db: Kysely<RegistryDatabase>) {
  return db.selectFrom('changes').select(CHANGE_COLUMNS)
}

export async function findEntity(db: Kysely<RegistryDatabase>, id: string): Promise<StoredEntity | null> {
  const row = await selectEntities(db).where('id', '=', id).executeTakeFirst()
  return row === undefined ? null : toStoredEntity(row)
}

/** The entity of a point read's rows, or null when there is none. */
export function firstEntity(rows: readonly (EntityRow & { resource?: string | null })[]): StoredEntity | null {
  return rows.length === 0 ? null : toStoredEntity(rows[0]!)
}

export function toStoredEntity(row: EntityRow & { resource?: string | null }): StoredEntity {
  const { id, state, merged_into: mergedInto, resource } = row
  // Parsed when asked: served as its resource, an entity seldom needs its snapshot (a get by id
  // never does), nor does an import's line that repeats the stored record.
  let snapshot: PublicSnapshot | undefined
  const entity: StoredEntity = {
    id,
    state,
    mergedInto,
    get snapshot() {
      return (snapshot ??= JSON.parse(row.snapshot) as PublicSnapshot)
    },
    set snapshot(value) {
      snapshot = value
    },
  }
  if (resource != null) entity.resource = resource
  return entity
}

/**
 * Page rows as they are (no copy a row): every canonical entity has its resource (migration 0004
 * rendered those stored before it), and a row of the page has an id.
 */
export function asRenderedEntities(rows: { id: string | null; resource: string | null }[]): RenderedEntity[] {
  return rows as RenderedEntity[]
}

export function toStoredChange(row: ChangeRow): StoredChange {
  return {
    changeId: encodeChangeId(Number(row.seq)),
    entityId: row.entity_id,
    changeType: row.change_type,
    changedKeys: JSON.parse(row.changed_keys),
    mergedInto: row.merged_into,
    recordedAt: row.recorded_at,
    snapshot: JSON.parse(row.snapshot),
  }
}

/** The entity's row but its private snapshot, which an update may keep. */
export function entityRow(entity: StoredEntity): Omit<Insertable<EntitiesTable>, 'private_snapshot'> {
  return {
    id: entity.id,
    state: entity.state,
    merged_into: entity.mergedInto,
    ...contractColumnValues(entity.snapshot),
    snapshot: JSON.stringify(entity.snapshot),
    resource: entity.state === 'canonical' ? renderEntityResource(entity) : null,
  }
}

export function changeRow(change: NewChange): Insertable<ChangesTable> {
  return {
    entity_id: change.entityId,
    change_type: change.changeType,
    changed_keys: JSON.stringify(change.changedKeys),
    merged_into: change.mergedInto,
    recorded_at: change.recordedAt,
    ...contractColumnValues(change.snapshot),
    ...previousContractColumnValues(change.previousSnapshot),
    snapshot: JSON.stringify(change.snapshot),
  }
}
