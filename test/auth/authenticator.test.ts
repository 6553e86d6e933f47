import { describe, expect, it } from 'vitest'
import { createApiKeyAuthenticator } from '../../src/auth/api-keys.js'
import { generateApiKey } from '../../src/auth/key-format.js'
import { createKeyManager } from '../../src/auth/key-manager.js'
import { createMemoryStore } from '../../src/memory/index.js'
import { DependencyUnavailableError } from '../../src/ports/dependency.js'
import type { ApiKeyStore } from '../../src/ports/auth.js'

const request = { method: 'GET', url: 'http://localhost/v1/entities', headers: new Headers() }

/** A real memory store whose key lookups are counted, and which can be made to fail. */
function countingStore() {
  const store = createMemoryStore()
  const counts = { lookups: 0, uses: [] as { id: string; usedAt: string }[][] }
  let failing = false
  const keys: ApiKeyStore = {
    ...store,
    findApiKey: async (hash) => {
      counts.lookups++
      if (failing) throw new DependencyUnavailableError('store', 'the store is away')
      return store.findApiKey(hash)
    },
    recordApiKeyUse: async (uses) => {
      counts.uses.push([...uses])
      return store.recordApiKeyUse(uses)
    },
  }
  return { keys, counts, fail: (value: boolean) => void (failing = value), manager: createKeyManager(store) }
}

describe('API key authenticator', () => {
  it('accepts configured keys of any form, naming them by position, never by the key', async () => {
    const auth = createApiKeyAuthenticator({ keys: ['first-secret', 'second-secret'] })
    expect(await auth.authenticate('second-secret', request)).toEqual({ id: 'configured-2' })
    expect(await auth.authenticate('first-secret', request)).toEqual({ id: 'configured-1' })
    expect(await auth.authenticate('third-secret', request)).toBeNull()
    expect(await auth.authenticate(null, request)).toBeNull()
  })

  it('refuses a malformed key without asking the store', async () => {
    const { keys, counts, manager } = countingStore()
    const { key } = await manager.createKey({ org: 'acme' })
    const auth = createApiKeyAuthenticator({ store: keys })
    const typo = key.slice(0, 10) + (key[10] === 'a' ? 'b' : 'a') + key.slice(11)
    for (const token of [typo, 'guess', `${key}x`, key.slice(0, -1)]) expect(await auth.authenticate(token, request)).toBeNull()
    expect(counts.lookups).toBe(0)
    expect(await auth.authenticate(key, request)).toEqual({ id: key.slice(0, 11), org: 'acme' })
    expect(counts.lookups).toBe(1)
  })

  it('reuses a lookup, found or not, for the time to live, then sees a revocation', async () => {
    let time = 1_000_000
    const { keys, counts, manager } = countingStore()
    const { key, apiKey } = await manager.createKey({ org: 'acme' })
    const unknown = generateApiKey()
    const auth = createApiKeyAuthenticator({ store: keys, cacheTtlMs: 5000, now: () => time })
    await Promise.all(Array.from({ length: 20 }, () => auth.authenticate(key, request)))
    for (let index = 0; index < 20; index++) expect(await auth.authenticate(unknown, request)).toBeNull()
    expect(counts.lookups).toBe(2)
    await manager.revokeKey(apiKey.id)
    time += 4999
    expect(await auth.authenticate(key, request)).not.toBeNull()
    time += 1
    expect(await auth.authenticate(key, request)).toBeNull()
    expect(counts.lookups).toBe(3)
  })

  it('refuses an expired key from the moment it expires, cached or not', async () => {
    let time = Date.parse('2026-06-01T00:00:00Z')
    const { keys } = countingStore()
    const manager = createKeyManager(keys, { now: () => new Date(time) })
    const { key } = await manager.createKey({ org: 'acme', expiresAt: new Date(time + 1000) })
    const auth = createApiKeyAuthenticator({ store: keys, now: () => time })
    expect(await auth.authenticate(key, request)).not.toBeNull()
    time += 1000
    expect(await auth.authenticate(key, request)).toBeNull()
  })

  it('keeps at most cacheSize lookups under a flood of made-up keys', async () => {
    const { keys, counts, manager } = countingStore()
    const { key } = await manager.createKey({ org: 'acme' })
    const auth = createApiKeyAuthenticator({ store: keys, cacheSize: 100 })
    await auth.authenticate(key, request)
    for (let index = 0; index < 1000; index++) await auth.authenticate(generateApiKey(), request)
    expect(counts.lookups).toBe(1001)
    // The oldest lookup was dropped: asking again reaches the store.
    await auth.authenticate(key, request)
    expect(counts.lookups).toBe(1002)
  })

  it('does not keep a failed lookup: the store away is an error each time, and the next lookup retries', async () => {
    const { keys, counts, fail, manager } = countingStore()
    const { key } = await manager.createKey({ org: 'acme' })
    const auth = createApiKeyAuthenticator({ store: keys })
    fail(true)
    await expect(auth.authenticate(key, request)).rejects.toBeInstanceOf(DependencyUnavailableError)
    fail(false)
    expect(await auth.authenticate(key, request)).not.toBeNull()
    expect(counts.lookups).toBe(2)
  })

  it('writes a key\'s first use within a second, then at most once a minute', async () => {
    let time = Date.parse('2026-06-01T00:00:00Z')
    const { keys, counts, manager } = countingStore()
    const { key, apiKey } = await manager.createKey({ org: 'acme' })
    const auth = createApiKeyAuthenticator({ store: keys, cacheTtlMs: 5000, now: () => time })
    await auth.authenticate(key, request)
    await new Promise((resolve) => setTimeout(resolve, 1100))
    expect(counts.uses).toEqual([[{ id: apiKey.id, usedAt: '2026-06-01T00:00:00.000Z' }]])
    for (let second = 1; second < 60; second++) {
      time += 1000
      await auth.authenticate(key, request)
    }
    await auth.flush()
    expect(counts.uses).toHaveLength(1)
    time += 1000
    await auth.authenticate(key, request)
    await auth.flush()
    expect(counts.uses.at(-1)).toEqual([{ id: apiKey.id, usedAt: '2026-06-01T00:01:00.000Z' }])
    expect((await manager.listKeys())[0]!.lastUsedAt).toBe('2026-06-01T00:01:00.000Z')
  })
})
