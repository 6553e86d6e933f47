import { describe, expect, it, vi } from 'vitest'
import { createApiKeyAuthenticator } from '../../src/auth/api-keys.js'
import { createKeyManager } from '../../src/auth/key-manager.js'
import { createMemoryStore } from '../../src/memory/index.js'

const hashes = vi.hoisted(() => ({ count: 0 }))
vi.mock('../../src/auth/key-format.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/auth/key-format.js')>()
  return { ...original, keyHash: (key: string) => (hashes.count++, original.keyHash(key)) }
})

const request = { method: 'GET', url: 'http://localhost/v1/entities', headers: new Headers() }

describe('API keys accepted lately', () => {
  it('hash an accepted key once a time to live, a refused one every time', async () => {
    let time = 1_000_000
    const auth = createApiKeyAuthenticator({ keys: ['the-secret'], cacheTtlMs: 5000, now: () => time })
    hashes.count = 0
    for (let index = 0; index < 10; index++) expect(await auth.authenticate('the-secret', request)).toEqual({ id: 'configured-1' })
    expect(hashes.count).toBe(1)
    for (let index = 0; index < 10; index++) expect(await auth.authenticate('a-guess', request)).toBeNull()
    expect(hashes.count).toBe(11)
    time += 5000
    expect(await auth.authenticate('the-secret', request)).toEqual({ id: 'configured-1' })
    expect(hashes.count).toBe(12)
  })

  it('are still checked on every request: a revoked key is refused once its lookup expires, and hashed again each time', async () => {
    let time = 1_000_000
    const store = createMemoryStore()
    const manager = createKeyManager(store)
    const { key, apiKey } = await manager.createKey({ org: 'acme' })
    const auth = createApiKeyAuthenticator({ store, cacheTtlMs: 5000, now: () => time })
    expect(await auth.authenticate(key, request)).toEqual({ id: apiKey.id, org: 'acme' })
    await manager.revokeKey(apiKey.id)
    time += 5000
    hashes.count = 0
    expect(await auth.authenticate(key, request)).toBeNull()
    expect(await auth.authenticate(key, request)).toBeNull()
    expect(hashes.count).toBe(2)
  })
})
