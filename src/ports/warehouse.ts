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
