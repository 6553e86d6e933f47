import type { StoredChange, StoredEntity } from '../contract/entity.js'
import { decodeChangeId, encodeChangeId } from '../contract/change-id.js'
import { matchesQualifiers } from '../gffs/evaluate.js'
import type { ApiKeyStore } from '../ports/auth.js'
import type { ChangePage, EntityPage, EntityStore, ListChangesQuery, ListEntitiesQuery } from '../ports/entity-store.js'
import type { Warehouse } from '../ports/warehouse.js'
import type { NewChange, WarehouseBackend, WarehouseTransaction } from '../warehouse/backend.js'
import { createWarehouse } from '../warehouse/operations.js'

export interface MemoryStore extends EntityStore, ApiKeyStore {
  warehouse: Warehouse
}

/**
 * Every store port in memory: for tests, and the reference for a custom store. Lists scan all
 * entities, so it suits thousands of entities, not millions.
 */
export function createMemoryStore(): MemoryStore {
  const entities = new Map<string, StoredEntity>()
  const privateSnapshots = new Map<string, Record<string, unknown>>()
  const changes: StoredChange[] = []
  const keyHashes = new Set<string>()
  // Serializes write transactions, as the SQL stores do.
  let writeQueue: Promise<unknown> = Promise.resolve()

  const transaction: WarehouseTransaction = {
    getEntity: async (id) => entities.get(id) ?? null,
    async putEntity(entity, privateSnapshot) {
      entities.set(entity.id, structuredClone(entity))
      if (privateSnapshot !== undefined) privateSnapshots.set(entity.id, structuredClone(privateSnapshot))
    },
    async appendChange(change: NewChange) {
      changes.push({ ...structuredClone(change), changeId: encodeChangeId(changes.length + 1) })
    },
  }
  const backend: WarehouseBackend = {
    transaction<T>(work: (tx: WarehouseTransaction) => Promise<T>): Promise<T> {
      const result = writeQueue.then(() => work(transaction))
      writeQueue = result.catch(() => undefined)
      return result
    },
  }

  return {
    warehouse: createWarehouse(backend),

    async listEntities({ filter, after, limit }: ListEntitiesQuery): Promise<EntityPage> {
      const matching = [...entities.values()]
        .filter((entity) => entity.state === 'canonical' && (after === null || entity.id > after))
        .filter((entity) => filter === null || matchesQualifiers(filter, entity.snapshot))
        .sort((a, b) => (a.id < b.id ? -1 : 1))
      return { entities: matching.slice(0, limit).map((entity) => structuredClone(entity)), hasMore: matching.length > limit }
    },

    getEntity: async (id) => {
      const entity = entities.get(id)
      return entity ? structuredClone(entity) : null
    },

    async listChanges({ filter, after, limit, window }: ListChangesQuery): Promise<ChangePage> {
      // Sequence n is at index n - 1.
      const start = after === null ? 0 : (decodeChangeId(after) ?? 0)
      const end = Math.min(changes.length, start + window)
      const page: StoredChange[] = []
      let scanned = start
      while (scanned < end && page.length < limit) {
        const change = changes[scanned++]!
        if (matchesQualifiers(filter, change.snapshot)) page.push(structuredClone(change))
      }
      const cursor = scanned > 0 ? encodeChangeId(scanned) : after
      return { changes: page, cursor, hasMore: scanned < changes.length }
    },

    feedHead: async () => (changes.length > 0 ? encodeChangeId(changes.length) : null),
    isChangeId: (id) => decodeChangeId(id) !== null,

    hasKeyHash: async (hash) => keyHashes.has(hash),
    addKeyHash: async (hash) => void keyHashes.add(hash),
    countKeys: async () => keyHashes.size,
  }
}
