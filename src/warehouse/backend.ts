import type { StoredChange, StoredEntity } from '../contract/entity.js'

/** A change record before the store gives it its id (its place in the feed). */
export type NewChange = Omit<StoredChange, 'changeId'>

/** What a store offers the warehouse inside one write transaction. */
export interface WarehouseTransaction {
  getEntity(id: string): Promise<StoredEntity | null>
  /** `privateSnapshot` undefined keeps the stored one. */
  putEntity(entity: StoredEntity, privateSnapshot: Record<string, unknown> | undefined): Promise<void>
  appendChange(change: NewChange): Promise<void>
}

/**
 * A store's write primitive. Transactions must be serialized with every other writer, so that
 * change records commit in feed order (the feed is gapless) and merge checks see no concurrent merge.
 */
export interface WarehouseBackend {
  transaction<T>(work: (tx: WarehouseTransaction) => Promise<T>): Promise<T>
}
