// @ts-check
// A RegistryStore of your own, over LMDB: the shape of the bundled memory store
// (src/memory/memory-store.ts), with its maps and arrays replaced by LMDB sub-databases.
// `createWarehouse(backend)` supplies every write rule (upserts, tombstones, merges, drains); the
// store only offers a transaction that reads entities and buffers writes, and the read side.
import { createWarehouse, decodeChangeId, encodeChangeId, matchesQualifiers, tallyFacets } from 'entity-registry'
import { open } from 'lmdb'

/**
 * @typedef {import('entity-registry').RegistryStore} RegistryStore
 * @typedef {import('entity-registry').StoredEntity} StoredEntity
 * @typedef {import('entity-registry').StoredChange} StoredChange
 * @typedef {import('entity-registry').PublicSnapshot} PublicSnapshot
 * @typedef {import('entity-registry').EntityPage} EntityPage
 * @typedef {import('entity-registry').ChangePage} ChangePage
 * @typedef {import('entity-registry').ListEntitiesQuery} ListEntitiesQuery
 * @typedef {import('entity-registry').ListChangesQuery} ListChangesQuery
 * @typedef {import('entity-registry').NewChange} NewChange
 * @typedef {import('entity-registry').WarehouseBackend} WarehouseBackend
 * @typedef {import('entity-registry').WarehouseTransaction} WarehouseTransaction
 * @typedef {import('entity-registry').StoredApiKey} StoredApiKey
 * @typedef {import('entity-registry').StoredOrganization} StoredOrganization
 */

/** At most this many entity rows are checked for one `listEntities` call, matching or not. */
export const SCAN_LIMIT = 10_000

/**
 * Every store port in one LMDB environment (a directory). Keys are kept in order, so:
 * - `entities`: entity id -> StoredEntity, in any state. Key order is id order, so a keyset page
 *   is a range read starting after the cursor.
 * - `private`: entity id -> the record's private fields (never served).
 * - `changes`: sequence number (1, 2, ...) -> StoredChange; its id is `encodeChangeId(sequence)`.
 * - `previous`: sequence number -> the public snapshot before that change (`scope: 'either'`).
 * - `keys`: SHA-256 hex of an API key -> StoredApiKey (never the key itself).
 * - `keyIds`: a key's public id -> its hash, so that an id is unique and found without a scan.
 * - `organizations`: name -> StoredOrganization.
 *
 * @param {{ path: string, scanLimit?: number }} options `path`: the directory (created if missing);
 *   `scanLimit`: the bound on rows one entity page checks (default `SCAN_LIMIT`).
 * @returns {RegistryStore}
 */
export function createLmdbStore({ path, scanLimit = SCAN_LIMIT }) {
  const root = open({ path, compression: false })
  const entities = root.openDB('entities', {})
  const privateSnapshots = root.openDB('private', {})
  const changes = root.openDB('changes', {})
  const previousSnapshots = root.openDB('previous', {})
  const apiKeys = root.openDB('keys', {})
  const apiKeyIds = root.openDB('keyIds', {})
  const organizations = root.openDB('organizations', {})
  /** @returns {StoredApiKey[]} */
  const allApiKeys = () => [...apiKeys.getRange({}).map(({ value }) => value)]
  const byText = (/** @type {string} */ a, /** @type {string} */ b) => (a < b ? -1 : a > b ? 1 : 0)

  /** The sequence number of the newest committed change, 0 for an empty feed. */
  const headSequence = () => {
    for (const key of changes.getKeys({ reverse: true, limit: 1 })) return /** @type {number} */ (key)
    return 0
  }

  // Serializes write transactions in this process, as the memory store does: the warehouse's
  // checks (merge cycles, the next sequence number) must see no concurrent writer. One process
  // per LMDB directory writes; readers may be many.
  /** @type {Promise<unknown>} */
  let writeQueue = Promise.resolve()

  /** @type {WarehouseBackend} */
  const backend = {
    transaction(work) {
      const result = writeQueue.then(async () => {
        // Writes are buffered here and committed together below, so readers never see half a
        // transaction and a transaction that throws writes nothing.
        /** @type {Map<string, StoredEntity>} */
        const pendingEntities = new Map()
        /** @type {Map<string, Record<string, unknown>>} */
        const pendingPrivate = new Map()
        /** @type {{ sequence: number, change: StoredChange, previousSnapshot: PublicSnapshot }[]} */
        const pendingChanges = []
        let sequence = headSequence()

        /** @type {WarehouseTransaction} */
        const tx = {
          async getEntity(id) {
            const pending = pendingEntities.get(id)
            if (pending) return structuredClone(pending)
            return /** @type {StoredEntity | undefined} */ (entities.get(id)) ?? null
          },
          async putEntity(entity, privateSnapshot) {
            pendingEntities.set(entity.id, structuredClone(entity))
            if (privateSnapshot !== undefined) pendingPrivate.set(entity.id, structuredClone(privateSnapshot))
          },
          async appendChange({ previousSnapshot, ...change }) {
            sequence++
            pendingChanges.push({
              sequence,
              change: { ...structuredClone(change), changeId: encodeChangeId(sequence) },
              previousSnapshot: structuredClone(previousSnapshot),
            })
          },
        }

        const value = await work(tx)
        // One LMDB write transaction: each change commits with the entity it changed.
        root.transactionSync(() => {
          for (const [id, entity] of pendingEntities) entities.put(id, entity)
          for (const [id, snapshot] of pendingPrivate) privateSnapshots.put(id, snapshot)
          for (const { sequence, change, previousSnapshot } of pendingChanges) {
            changes.put(sequence, change)
            previousSnapshots.put(sequence, previousSnapshot)
          }
        })
        return value
      })
      writeQueue = result.catch(() => undefined)
      return result
    },
  }

  return {
    warehouse: createWarehouse(backend),

    /**
     * Walks entities in id order from the cursor and keeps the canonical ones the qualifiers match.
     * There is no index for filters: a filter that matches little may check many rows, so one
     * call checks at most `scanLimit`; stopped by that bound, it returns the (possibly empty) page
     * it has, with `cursor` at the last id it checked, and `hasMore`.
     * @param {ListEntitiesQuery} query
     * @returns {Promise<EntityPage>}
     */
    async listEntities({ qualifiers, after, limit }) {
      /** @type {StoredEntity[]} */
      const page = []
      let checked = 0
      /** @type {string | null} */
      let lastChecked = after
      // `start` is inclusive: the row equal to `after` (the previous page's last) is skipped.
      for (const { key, value } of entities.getRange(after === null ? {} : { start: after })) {
        if (key === after) continue
        if (checked === scanLimit) return { entities: page, hasMore: true, cursor: lastChecked }
        checked++
        lastChecked = /** @type {string} */ (key)
        const entity = /** @type {StoredEntity} */ (value)
        if (entity.state !== 'canonical' || !matchesQualifiers(qualifiers, entity.snapshot)) continue
        // One match more than the page holds tells that another page follows.
        if (page.length === limit) return { entities: page, hasMore: true }
        page.push(entity)
      }
      return { entities: page, hasMore: false }
    },

    // Counts read every matching entity (no index here): the registry keeps each answer until the
    // feed moves, so a store this size answers them once per change.
    async countFacets({ qualifiers, fields, limit }) {
      const feedHead = headSequence()
      const matching = entities
        .getRange({})
        .map(({ value }) => /** @type {StoredEntity} */ (value))
        .filter((entity) => entity.state === 'canonical' && matchesQualifiers(qualifiers, entity.snapshot))
        .map((entity) => entity.snapshot)
      return { ...tallyFacets(matching, fields, limit), feedHead: feedHead > 0 ? encodeChangeId(feedHead) : null }
    },

    async getEntity(id) {
      return /** @type {StoredEntity | undefined} */ (entities.get(id)) ?? null
    },

    /**
     * @param {ListChangesQuery} query
     * @returns {Promise<ChangePage>}
     */
    async listChanges({ qualifiers, after, limit, window, scope = 'after' }) {
      const start = after === null ? 0 : (decodeChangeId(after) ?? 0)
      const head = headSequence()
      const end = Math.min(head, start + window)
      /** @type {StoredChange[]} */
      const page = []
      let scanned = start
      if (end > start && limit > 0) {
        for (const { key, value } of changes.getRange({ start: start + 1, end: end + 1 })) {
          const change = /** @type {StoredChange} */ (value)
          scanned = /** @type {number} */ (key)
          const matches =
            matchesQualifiers(qualifiers, change.snapshot) ||
            (scope === 'either' && matchesQualifiers(qualifiers, /** @type {PublicSnapshot} */ (previousSnapshots.get(scanned))))
          if (matches) page.push(change)
          if (page.length >= limit) break
        }
      }
      const cursor = scanned > 0 ? encodeChangeId(scanned) : after
      return { changes: page, cursor, hasMore: scanned < head }
    },

    async feedHead() {
      const head = headSequence()
      return head > 0 ? encodeChangeId(head) : null
    },
    isChangeId: (id) => decodeChangeId(id) !== null,

    async close() {
      // Let a transaction under way commit before the environment closes.
      await writeQueue
      await root.close()
    },

    findApiKey: async (hash) => apiKeys.get(hash) ?? null,
    async addApiKey({ hash, ...key }) {
      // One write transaction: the checks and the writes see the same state.
      return root.transactionSync(() => {
        if (apiKeys.doesExist(hash) || apiKeyIds.doesExist(key.id)) return false
        if (!organizations.doesExist(key.org)) organizations.put(key.org, { name: key.org, createdAt: key.createdAt })
        apiKeys.put(hash, key)
        apiKeyIds.put(key.id, hash)
        return true
      })
    },
    listApiKeys: async ({ org } = {}) =>
      allApiKeys()
        .filter((key) => org === undefined || key.org === org)
        .sort((a, b) => byText(a.org, b.org) || byText(a.createdAt, b.createdAt) || byText(a.id, b.id)),
    async revokeApiKeys(which, revokedAt) {
      return root.transactionSync(() => {
        /** @type {string[]} */
        const revoked = []
        for (const { key: hash, value: key } of apiKeys.getRange({})) {
          if (key.revokedAt !== null || ('id' in which ? key.id !== which.id : key.org !== which.org)) continue
          apiKeys.put(hash, { ...key, revokedAt })
          revoked.push(key.id)
        }
        return revoked.sort(byText)
      })
    },
    async recordApiKeyUse(uses) {
      root.transactionSync(() => {
        for (const { id, usedAt } of uses) {
          const hash = apiKeyIds.get(id)
          const key = hash === undefined ? undefined : apiKeys.get(hash)
          if (key && (key.lastUsedAt === null || key.lastUsedAt < usedAt)) apiKeys.put(hash, { ...key, lastUsedAt: usedAt })
        }
      })
    },
    listOrganizations: async () => [...organizations.getRange({}).map(({ value }) => value)],
    countApiKeys: async () => apiKeys.getCount(),
  }
}
