import { describe, expect, it } from 'vitest'
import { createApiKeyAuthenticator } from '../../src/auth/api-keys.js'
import { createKeyManager } from '../../src/auth/key-manager.js'
import { createMemoryStore } from '../../src/memory/index.js'

const request = { method: 'GET', url: 'http://localhost/v1/entities', headers: new Headers() }

// An accepted key's hash is kept for the lookup's time to live: what a request with it still checks.
describe('API keys accepted lately', () => {
  it('leave other keys refused: one that differs by a character, a prefix, an extension', async () => {
    const auth = createApiKeyAuthenticator({ keys: ['the-secret'] })
    for (let index = 0; index < 3; index++) expect(await auth.authenticate('the-secret', request)).toEqual({ id: 'configured-1' })
    for (const token of ['the-secrat', 'the-secre', 'the-secret2', 'THE-SECRET']) expect(await auth.authenticate(token, request)).toBeNull()
    expect(await auth.authenticate('the-secret', request)).toEqual({ id: 'configured-1' })
  })

  it('are refused once revoked (after the lookup expires) or expired (at once), and stay refused', async () => {
    let time = Date.parse('2026-11-26T10:00:00Z')
    const store = createMemoryStore()
    const manager = createKeyManager(store, { now: () => new Date(time) })
    const revoked = await manager.createKey({ org: 'acme' })
    const expiring = await manager.createKey({ org: 'acme', expiresAt: new Date(time + 2000) })
    const auth = createApiKeyAuthenticator({ store, cacheTtlMs: 5000, now: () => time })
    expect(await auth.authenticate(revoked.key, request)).toEqual({ id: revoked.apiKey.id, org: 'acme' })
    expect(await auth.authenticate(expiring.key, request)).toEqual({ id: expiring.apiKey.id, org: 'acme' })
    await manager.revokeKey(revoked.apiKey.id)
    time += 2000
    expect(await auth.authenticate(expiring.key, request)).toBeNull()
    time += 3000
    for (let index = 0; index < 2; index++) {
      expect(await auth.authenticate(revoked.key, request)).toBeNull()
      expect(await auth.authenticate(expiring.key, request)).toBeNull()
    }
  })
})
