import type { ApiKeyStore, StoredApiKey, StoredOrganization } from '../ports/auth.js'

/** The API-key part of the memory store: keys by hash, and the organizations they belong to. */
export function createMemoryApiKeyStore(): ApiKeyStore {
  const keys = new Map<string, StoredApiKey>()
  const organizations = new Map<string, StoredOrganization>()
  const copy = (key: StoredApiKey): StoredApiKey => ({ ...key })
  const byId = (id: string) => [...keys.values()].find((key) => key.id === id)
  return {
    findApiKey: async (hash) => {
      const key = keys.get(hash)
      return key ? copy(key) : null
    },
    async addApiKey({ hash, ...key }) {
      if (keys.has(hash) || byId(key.id)) return false
      if (!organizations.has(key.org)) organizations.set(key.org, { name: key.org, createdAt: key.createdAt })
      keys.set(hash, copy(key))
      return true
    },
    listApiKeys: async ({ org } = {}) =>
      [...keys.values()]
        .filter((key) => org === undefined || key.org === org)
        .sort((a, b) => compare(a.org, b.org) || compare(a.createdAt, b.createdAt) || compare(a.id, b.id))
        .map(copy),
    async revokeApiKeys(which, revokedAt) {
      const revoked: string[] = []
      for (const key of keys.values()) {
        if (key.revokedAt !== null || ('id' in which ? key.id !== which.id : key.org !== which.org)) continue
        key.revokedAt = revokedAt
        revoked.push(key.id)
      }
      return revoked
    },
    async recordApiKeyUse(uses) {
      for (const { id, usedAt } of uses) {
        const key = byId(id)
        if (key && (key.lastUsedAt === null || key.lastUsedAt < usedAt)) key.lastUsedAt = usedAt
      }
    },
    listApiKeyHashes: async () => [...keys].filter(([, key]) => key.revokedAt === null).map(([hash]) => hash),
    listOrganizations: async () => [...organizations.values()].sort((a, b) => compare(a.name, b.name)).map((org) => ({ ...org })),
    countApiKeys: async () => keys.size,
  }
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)
