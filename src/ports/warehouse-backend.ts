import type { PublicSnapshot, StoredChange, StoredEntity } from '../contract/entity.js'
import type { SnapshotIds } from './warehouse.js'

/** A change record before the store gives it its id (its place in the feed). */
export type NewChange = Omit<StoredChange, 'changeId'> & {
  /**
   * The public snapshot before the change (empty when the entity was not canonical). The store
   * keeps its contract fields so that `filterScope=either` can match them; it is never served.
   */
  previousSnapshot: PublicSnapshot
}

/** What a store offers the warehouse inside one write transaction. */
export interface WarehouseTransaction {
  getEntity(id: string): Promise<StoredEntity | null>
  /** `privateSnapshot` undefined keeps the stored one. */
  putEntity(entity: StoredEntity, privateSnapshot: Record<string, unknown> | undefined): Promise<void>
  appendChange(change: NewChange): Promise<void>
  /**
   * The entities this transaction is about to read, so that a store may read them all at once
   * (one query for an import's batch rather than one per line); optional.
   */
  preload?(ids: string[]): Promise<void>
  /**
   * The record last written for a canonical entity, without its id (its private snapshot), as the
   * JSON text the store keeps, when it has it at hand; optional. An upsert of a record equal to it changes
   * nothing, and skips validation (the stored one passed it).
   */
  storedRecord?(id: string): Promise<string | undefined>
}

/**
 * A store's write primitive: implement it and `createWarehouse(backend)` supplies the warehouse
 * rules. Transactions must be serialized with every other writer, so that change records commit in
 * feed order (the feed is gapless) and merge checks see no concurrent merge.
 */
export interface WarehouseBackend {
  transaction<T>(work: (tx: WarehouseTransaction) => Promise<T>): Promise<T>
  /** Optional: what a full snapshot import needs (`Warehouse.snapshotIds`). */
  snapshotIds?(): Promise<SnapshotIds>
}
