import type { ChangeType } from '../contract/entity.js'

/** A warehouse record in the import format: `id`, contract fields, `texts`, and any private keys. */
export type EntityRecord = { id: string } & Record<string, unknown>

export type WarehouseOperation =
  | { op: 'upsert'; record: EntityRecord }
  | { op: 'delete'; id: string }
  | { op: 'merge'; id: string; into: string }
  | { op: 'drain'; id: string }

/** What an operation changed; null when it changed nothing (an upsert of the same public snapshot). */
export interface ChangeSummary {
  changeType: ChangeType
  entityId: string
  changedKeys: string[]
}

export type OperationResult = { ok: true; change: ChangeSummary | null } | { ok: false; error: WarehouseError }

/** The write side. Each operation is atomic: the entity row and its change record commit together. */
export interface Warehouse {
  upsert(record: EntityRecord): Promise<ChangeSummary | null>
  delete(id: string): Promise<ChangeSummary | null>
  merge(sourceId: string, targetId: string): Promise<ChangeSummary | null>
  drain(id: string): Promise<ChangeSummary | null>
  /**
   * Applies operations in order, each atomically; one that is rejected writes nothing and the rest
   * still apply. Faster than one call per operation (one transaction per batch).
   */
  apply(operations: WarehouseOperation[]): Promise<OperationResult[]>
  /** Scratch space for a full snapshot's ids, where the store offers it (`importNdjson`'s `full`). */
  snapshotIds?(): Promise<SnapshotIds>
}

/**
 * The ids a full snapshot names, kept by the store (the SQL stores: a table of the run's own) rather
 * than in the process, whose memory would grow with the warehouse.
 */
export interface SnapshotIds {
  /** Adds ids; an id added again is kept once. */
  add(ids: string[]): Promise<void>
  /** The canonical entities, and how many of them are absent from the ids added. */
  countAbsent(): Promise<{ canonical: number; absent: number }>
  /** Up to `limit` canonical entities absent from the ids added, in id order, after `after`. */
  absent(after: string | null, limit: number): Promise<string[]>
  /** Drops the ids. */
  close(): Promise<void>
}

export type WarehouseErrorCode = 'invalid_record' | 'not_found' | 'invalid_merge'

/** An operation the warehouse refuses; nothing of it was written. */
export class WarehouseError extends Error {
  override readonly name = 'WarehouseError'
  constructor(
    readonly code: WarehouseErrorCode,
    message: string,
  ) {
    super(message)
  }
}
