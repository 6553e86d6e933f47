import { sql, type Insertable, type Kysely, type Selectable } from 'kysely'
import { encodeChangeId } from '../contract/change-id.js'
import { MAX_MERGE_HOPS } from '../contract/merges.js'
import type { EntityState, PublicSnapshot, StoredChange, StoredEntity } from '../contract/entity.js'
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

/** What a read of an entity to serve needs: with its stored resource, when canonical. */
export const SERVED_COLUMNS = [...ENTITY_COLUMNS, 'resource'] as const
export type ServedEntityRow = Pick<Selectable<EntitiesTable>, (typeof SERVED_COLUMNS)[number]>

export function selectServedEntities(db: Kysely<RegistryDatabase>) {
  return db.selectFrom('entities').select(SERVED_COLUMNS)
}

/** The reads of several gets by id in one statement, `ids` bound as one array (PostgreSQL). */
export function selectServedEntitiesAmong(db: Kysely<RegistryDatabase>, ids: string | readonly string[]) {
  return selectServedEntities(db).where('id', '=', sql<string>`any(${ids}::text[])`)
}

/** The same on SQLite, the ids bound as one JSON array (`idsJson`): one statement text whatever their number, prepared once. */
export function selectServedEntitiesAmongJson(db: Kysely<RegistryDatabase>, idsJson: string) {
  return selectServedEntities(db).where('id', 'in', sql<string>`(select value from json_each(${idsJson}))`)
}

/** A get by id's read. */
export function selectServedEntity(db: Kysely<RegistryDatabase>, id: string) {
  return selectServedEntities(db).where('id', '=', id)
}

/**
 * The entity `id` stands for, as served, as `followMerges` finds it, in one statement: the entity
 * itself unless merged (SQLite stops at it: no chain is read for most gets), else the chain's rows hop
 * by hop, a merged row followed into the next while fewer than MAX_MERGE_HOPS hops were taken, so
 * that only the last can be other than merged: that one. No row when the chain ends merged (too long,
 * a missing link) or `id` never existed. `hopsTaken`: hops already followed to reach `id` (a store
 * that read the first hop apart starts the chain at the entity it was merged into).
 */
export function selectMergeEnd(db: Kysely<RegistryDatabase>, id: string, hopsTaken = 0) {
  const merged = sql.lit<EntityState>('merged')
  return db
    .withRecursive('chain(id, state, merged_into, snapshot, resource, hops)', (db) =>
      db
        .selectFrom('entities')
        .select([...SERVED_COLUMNS, sql.lit(hopsTaken).as('hops')])
        .where('id', '=', id)
        .unionAll(
          db
            .selectFrom('chain')
            .innerJoin('entities as next', 'next.id', 'chain.merged_into')
            .select(['next.id', 'next.state', 'next.merged_into', 'next.snapshot', 'next.resource', sql<number>`chain.hops + 1`.as('hops')])
            .where('chain.state', '=', merged)
            .where('chain.hops', '<', sql.lit(MAX_MERGE_HOPS)),
        ),
    )
    .selectFrom('entities')
    .select(SERVED_COLUMNS)
    .where('id', '=', id)
    .where('state', '<>', merged)
    .unionAll((eb) => eb.selectFrom('chain').select(SERVED_COLUMNS).where('state', '<>', merged))
    // Written in: with the limit bound, SQLite ran it six times as slow (30 us against 5).
    .limit(sql.lit(1))
}

/** The chain of the entity a merged entity was merged into (`id`): a PostgreSQL get's second read (kysely-store.ts). */
export function selectMergeEndAfterFirstHop(db: Kysely<RegistryDatabase>, id: string) {
  return selectMergeEnd(db, id, 1)
}

export function selectChanges(db: Kysely<RegistryDatabase>) {
  return db.selectFrom('changes').select(CHANGE_COLUMNS)
}

export async function findEntity(db: Kysely<RegistryDatabase>, id: string): Promise<StoredEntity | null> {
  const row = await selectEntities(db).where('id', '=', id).executeTakeFirst()
  return row === undefined ? null : toStoredEntity(row)
}

/** The entity of a point read's rows, or null when there is none. */
export function firstEntity(rows: readonly ServedEntityRow[]): StoredEntity | null {
  return rows.length === 0 ? null : toStoredEntity(rows[0]!)
}

export function toStoredEntity(row: EntityRow & { resource?: string | null }): StoredEntity {
  return new RowEntity(row)
}

/** `snapshot`'s accessor, one for every `RowEntity`: own and enumerable, as a plain entity's field is. */
let lazySnapshot: PropertyDescriptor

/**
 * An entity read from a row. Its snapshot is parsed when asked: served as its resource, an entity
 * seldom needs it (a get by id never does), nor does an import's line that repeats the stored
 * record. One shared accessor, not a getter in an object literal: that gave every entity closures and
 * a hidden class of its own, which outlived young collections (half of what a get by id allocated).
 */
class RowEntity implements StoredEntity {
  id: string
  state: EntityState
  mergedInto: string | null
  declare snapshot: PublicSnapshot
  declare resource?: string
  readonly #json: string
  #parsed: PublicSnapshot | undefined

  constructor({ id, state, merged_into: mergedInto, snapshot, resource }: EntityRow & { resource?: string | null }) {
    this.id = id
    this.state = state
    this.mergedInto = mergedInto
    this.#json = snapshot
    Object.defineProperty(this, 'snapshot', lazySnapshot)
    if (resource != null) this.resource = resource
  }

  static {
    lazySnapshot = {
      get(this: RowEntity) {
        return (this.#parsed ??= JSON.parse(this.#json) as PublicSnapshot)
      },
      set(this: RowEntity, value: PublicSnapshot) {
        this.#parsed = value
      },
      enumerable: true,
      configurable: true,
    }
  }
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
