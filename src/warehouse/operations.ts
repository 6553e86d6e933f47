import { EMPTY_SNAPSHOT, isEmptySnapshot, type PublicSnapshot, type StoredEntity } from '../contract/entity.js'
import { PUBLIC_KEYS } from '../contract/fields.js'
import { ENTITY_ID_PATTERN } from '../contract/ids.js'
import { followMerges } from '../contract/merges.js'
import {
  WarehouseError,
  type ChangeSummary,
  type EntityRecord,
  type OperationResult,
  type Warehouse,
  type WarehouseOperation,
} from '../ports/warehouse.js'
import type { NewChange, WarehouseBackend, WarehouseTransaction } from '../ports/warehouse-backend.js'

/** The write side over any store's backend: one implementation of the rules for every store. */
export function createWarehouse(backend: WarehouseBackend): Warehouse {
  const one = (operation: WarehouseOperation) => backend.transaction((tx) => applyOperation(tx, operation))
  return {
    upsert: (record: EntityRecord) => one({ op: 'upsert', record }),
    delete: (id: string) => one({ op: 'delete', id }),
    merge: (sourceId: string, targetId: string) => one({ op: 'merge', id: sourceId, into: targetId }),
    drain: (id: string) => one({ op: 'drain', id }),
    apply: (operations) =>
      backend.transaction(async (tx) => {
        await tx.preload?.(idsOf(operations))
        const results: OperationResult[] = []
        for (const operation of operations) {
          try {
            results.push({ ok: true, change: await applyOperation(tx, operation) })
          } catch (error) {
            if (!(error instanceof WarehouseError)) throw error
            results.push({ ok: false, error })
          }
        }
        return results
      }),
    ...(backend.snapshotIds ? { snapshotIds: backend.snapshotIds.bind(backend) } : {}),
  }
}

/** The entities operations name (a record's id only when it is a string: validation comes later). */
export function idsOf(operations: WarehouseOperation[]): string[] {
  const ids = new Set<string>()
  for (const operation of operations) {
    if (operation.op === 'upsert') {
      if (typeof operation.record.id === 'string') ids.add(operation.record.id)
    } else {
      ids.add(operation.id)
      if (operation.op === 'merge') ids.add(operation.into)
    }
  }
  return [...ids]
}

/**
 * Every check runs before the first write, so a rejected operation writes nothing even inside a
 * transaction shared with other operations.
 */
async function applyOperation(tx: WarehouseTransaction, operation: WarehouseOperation): Promise<ChangeSummary | null> {
  switch (operation.op) {
    case 'upsert':
      return upsert(tx, operation.record)
    case 'delete':
      return withdraw(tx, operation.id, 'deleted')
    case 'drain':
      return withdraw(tx, operation.id, 'drained')
    case 'merge':
      return merge(tx, operation.id, operation.into)
  }
}

async function upsert(tx: WarehouseTransaction, record: EntityRecord): Promise<ChangeSummary | null> {
  // Most of a nightly dump: the same record as last time.
  if (await isStoredRecord(tx, record)) return null
  // Loaded at the first write: its validation (zod) is a quarter of a server's cold start.
  const { normalizeRecord } = await import('./record.js')
  const { id, snapshot, privateSnapshot } = normalizeRecord(record)
  const previous = await tx.getEntity(id)
  const state = isEmptySnapshot(snapshot) ? 'deleted' : 'canonical'
  const wasCanonical = previous?.state === 'canonical'
  const previousSnapshot = wasCanonical ? previous.snapshot : EMPTY_SNAPSHOT
  const changedKeys = diffPublicKeys(previousSnapshot, snapshot)
  await tx.putEntity({ id, state, mergedInto: null, snapshot }, privateSnapshot)
  if (previous?.state === state && changedKeys.length === 0) return null
  const changeType = state === 'deleted' ? 'delete' : wasCanonical ? 'update' : 'create'
  return recordChange(tx, { entityId: id, changeType, changedKeys, mergedInto: null, snapshot, previousSnapshot })
}

/** Whether a canonical entity's stored record is `record` exactly (validated when it was stored). */
async function isStoredRecord(tx: WarehouseTransaction, { id, ...rest }: EntityRecord): Promise<boolean> {
  if (tx.storedRecord === undefined || typeof id !== 'string') return false
  const stored = await tx.storedRecord(id)
  if (stored === undefined) return false
  // The same text (the record in the order it was given, as stored): no parse of the stored one.
  return JSON.stringify(rest) === stored || sameJson(rest, JSON.parse(stored))
}

/** Deep equality of JSON values; the order of an object's keys does not matter. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, index) => sameJson(item, b[index]))
  if (Array.isArray(b)) return false
  const keys = Object.keys(a)
  if (keys.length !== Object.keys(b).length) return false
  return keys.every((key) => Object.hasOwn(b, key) && sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]))
}

/** Delete (a tombstone with an empty snapshot) or drain (withdrawn: 404); both read as `delete`. */
async function withdraw(tx: WarehouseTransaction, id: string, state: 'deleted' | 'drained'): Promise<ChangeSummary | null> {
  const previous = await requireEntity(tx, id)
  if (previous.state === state) return null
  const before = previous.state === 'canonical' ? previous.snapshot : EMPTY_SNAPSHOT
  await tx.putEntity({ id, state, mergedInto: null, snapshot: EMPTY_SNAPSHOT }, {})
  return recordChange(tx, {
    entityId: id,
    changeType: 'delete',
    changedKeys: diffPublicKeys(before, EMPTY_SNAPSHOT),
    mergedInto: null,
    snapshot: EMPTY_SNAPSHOT,
    previousSnapshot: before,
  })
}

async function merge(tx: WarehouseTransaction, sourceId: string, targetId: string): Promise<ChangeSummary | null> {
  if (sourceId === targetId) throw new WarehouseError('invalid_merge', `cannot merge ${sourceId} into itself`)
  const source = await requireEntity(tx, sourceId)
  const survivor = await resolveMergeTarget(tx, sourceId, targetId)
  if (source.state === 'merged' && source.mergedInto === targetId) return null
  // The row keeps its snapshot (unexposed) so the merge record carries it: type filters see merges.
  await tx.putEntity({ ...source, state: 'merged', mergedInto: targetId }, undefined)
  return recordChange(tx, {
    entityId: sourceId,
    changeType: 'merge',
    changedKeys: [],
    mergedInto: survivor.id,
    snapshot: source.snapshot,
    previousSnapshot: source.state === 'canonical' ? source.snapshot : EMPTY_SNAPSHOT,
  })
}

/** The canonical entity a merge into `targetId` ends at; rejects cycles, long chains and dead ends. */
async function resolveMergeTarget(tx: WarehouseTransaction, sourceId: string, targetId: string): Promise<StoredEntity> {
  const { end, path } = await followMerges(await requireEntity(tx, targetId), (id) => tx.getEntity(id))
  if (path.includes(sourceId)) {
    throw new WarehouseError('invalid_merge', `merging ${sourceId} into ${targetId} would close a cycle`)
  }
  if (end === null) throw new WarehouseError('invalid_merge', `merge target ${targetId} does not lead to a canonical entity`)
  if (end.state !== 'canonical') {
    throw new WarehouseError('invalid_merge', `merge target ${targetId} is ${end.state}, not canonical`)
  }
  return end
}

async function requireEntity(tx: WarehouseTransaction, id: string): Promise<StoredEntity> {
  if (!ENTITY_ID_PATTERN.test(id)) throw new WarehouseError('invalid_record', `id "${id}" must match [0-9a-z]+`)
  const entity = await tx.getEntity(id)
  if (entity === null) throw new WarehouseError('not_found', `entity ${id} does not exist`)
  return entity
}

async function recordChange(tx: WarehouseTransaction, change: Omit<NewChange, 'recordedAt'>): Promise<ChangeSummary> {
  await tx.appendChange({ ...change, recordedAt: new Date().toISOString() })
  return { changeType: change.changeType, entityId: change.entityId, changedKeys: change.changedKeys }
}

/** Top-level public keys whose values differ, in contract order. */
export function diffPublicKeys(before: PublicSnapshot, after: PublicSnapshot): string[] {
  return PUBLIC_KEYS.filter((key) =>
    key === 'texts' ? JSON.stringify(before.texts) !== JSON.stringify(after.texts) : before[key] !== after[key],
  )
}
