import type { PublicSnapshot, StoredChange, StoredEntity } from '../contract/entity.js'
import { decodeChangeId, encodeChangeId } from '../contract/change-id.js'
import { matchesQualifiers } from '../gffs/evaluate.js'
import type { ChangePage, EntityPage, ListChangesQuery, ListEntitiesQuery } from '../ports/entity-store.js'
import type { RegistryStore } from '../ports/store.js'
import type { NewChange, WarehouseBackend, WarehouseTransaction } from '../ports/warehouse-backend.js'
import { createWarehouse } from '../warehouse/operations.js'
import { createMemoryApiKeyStore } from './memory-api-key-store.js'
import { tallyFacets } from '../contract/facets.js'
import { createLocalNotifier } from '../live-feed/notifiers.js'

/**
 * Every store port in memory: for tests, and the reference for a custom store. Lists scan all
 * entities, so it suits thousands of entities, not millions.
 */
export function createMemoryStore(): RegistryStore {
  const entities = new Map<string, StoredEntity>()
  const privateSnapshots = new Map<string, Record<string, unknown>>()
  const changes: StoredChange[] = []
  /** The snapshot before each change, at the same index; only `scope: 'either'` reads it. */
  const previousSnapshots: PublicSnapshot[] = []
  // Serializes write transactions, as the SQL stores do.
  let writeQueue: Promise<unknown> = Promise.resolve()
  const commits = createLocalNotifier()

  const transaction: WarehouseTransaction = {
    getEntity: async (id) => entities.get(id) ?? null,
    async putEntity(entity, privateSnapshot) {
      entities.set(entity.id, structuredClone(entity))
      if (privateSnapshot !== undefined) privateSnapshots.set(entity.id, structuredClone(privateSnapshot))
    },
    async appendChange({ previousSnapshot, ...change }: NewChange) {
      changes.push({ ...structuredClone(change), changeId: encodeChangeId(changes.length + 1) })
      previousSnapshots.push(structuredClone(previousSnapshot))
    },
  }
  const backend: WarehouseBackend = {
    transaction<T>(work: (tx: WarehouseTransaction) => Promise<T>): Promise<T> {
      const result = writeQueue.then(() => work(transaction))
      writeQueue = result.catch(() => undefined)
      // Whether or not it appended a change: a wake for nothing costs a read of the feed's head.
      return result.finally(() => commits.notify())
    },
    async snapshotIds() {
      const named = new Set<string>()
      const canonicalIds = () => [...entities.values()].filter((entity) => entity.state === 'canonical').map((entity) => entity.id)
      const absentIds = () => canonicalIds().filter((id) => !named.has(id)).sort()
      return {
        add: async (ids) => ids.forEach((id) => named.add(id)),
        countAbsent: async () => ({ canonical: canonicalIds().length, absent: absentIds().length }),
        absent: async (after, limit) => absentIds().filter((id) => after === null || id > after).slice(0, limit),
        close: async () => named.clear(),
      }
    },
  }

  return {
    warehouse: createWarehouse(backend),
    changeNotifier: commits,

    async listEntities({ qualifiers, after, limit }: ListEntitiesQuery): Promise<EntityPage> {
      const matching = [...entities.values()]
        .filter((entity) => entity.state === 'canonical' && (after === null || entity.id > after))
        .filter((entity) => matchesQualifiers(qualifiers, entity.snapshot))
        .sort((a, b) => (a.id < b.id ? -1 : 1))
      return { entities: matching.slice(0, limit).map((entity) => structuredClone(entity)), hasMore: matching.length > limit }
    },

    async countFacets({ qualifiers, fields, limit }) {
      const matching = [...entities.values()].filter((entity) => entity.state === 'canonical' && matchesQualifiers(qualifiers, entity.snapshot))
      return { ...tallyFacets(matching.map((entity) => entity.snapshot), fields, limit), feedHead: changes.length > 0 ? encodeChangeId(changes.length) : null }
    },

    getEntity: async (id) => {
      const entity = entities.get(id)
      return entity ? structuredClone(entity) : null
    },

    getEntities: async (ids) => ids.flatMap((id) => (entities.has(id) ? [structuredClone(entities.get(id)!)] : [])),

    async listChanges({ qualifiers, after, limit, window, scope = 'after' }: ListChangesQuery): Promise<ChangePage> {
      // Sequence n is at index n - 1.
      const start = after === null ? 0 : (decodeChangeId(after) ?? 0)
      const end = Math.min(changes.length, start + window)
      const page: StoredChange[] = []
      let scanned = start
      while (scanned < end && page.length < limit) {
        const change = changes[scanned]!
        const matches =
          matchesQualifiers(qualifiers, change.snapshot) ||
          (scope === 'either' && matchesQualifiers(qualifiers, previousSnapshots[scanned]!))
        scanned++
        if (matches) page.push(structuredClone(change))
      }
      const cursor = scanned > 0 ? encodeChangeId(scanned) : after
      return { changes: page, cursor, hasMore: scanned < changes.length }
    },

    feedHead: async () => (changes.length > 0 ? encodeChangeId(changes.length) : null),
    isChangeId: (id) => decodeChangeId(id) !== null,

    close: async () => {},

    ...createMemoryApiKeyStore(),
  }
}
