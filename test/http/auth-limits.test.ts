/** Limits around keys: failed authentications per client address, and rate limits by key or organization. */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { serve } from '../../adapters/node.js'
import { createApiKeyAuthenticator, type ApiKeyAuthenticatorOptions } from '../../src/auth/api-keys.js'
import { generateApiKey } from '../../src/auth/key-format.js'
import { createKeyManager } from '../../src/auth/key-manager.js'
import { createSqliteStore } from '../../src/kysely/index.js'
import { createMemoryStore } from '../../src/memory/index.js'
import type { ApiKeyStore } from '../../src/ports/auth.js'
import type { RateLimiter } from '../../src/ports/rate-limiter.js'
import { createTokenBucketRateLimiter } from '../../src/rate-limit/token-bucket.js'
import { createRegistry, type RegistryOptions } from '../../src/registry.js'
import { expectError } from '../support/documents.js'

const URL_OF_LIST = 'http://registry.test/v1/entities?page[limit]=1'

/**
 * A registry over the memory store, whose key lookups are counted; `configuredKey` is given in
 * configuration. `keyStore` overrides some of the store's key methods (`listApiKeyHashes: undefined`
 * for a custom store without it).
 */
async function keyedRegistry(options: Partial<RegistryOptions> = {}, authOptions: ApiKeyAuthenticatorOptions = {}, keyStore: Partial<ApiKeyStore> = {}) {
  const configuredKey = generateApiKey()
  const memory = createMemoryStore()
  let lookups = 0
  const store = Object.assign(Object.create(memory) as typeof memory, {
    findApiKey: (hash: string) => (lookups++, memory.findApiKey(hash)),
    ...keyStore,
  })
  const manager = createKeyManager(store)
  const registry = createRegistry({ store, auth: createApiKeyAuthenticator({ store, keys: [configuredKey], ...authOptions }), ...options })
  const send = (key: string, address?: string) =>
    registry.fetch(new Request(URL_OF_LIST, { headers: { Authorization: `Bearer ${key}` } }), address === undefined ? {} : { address })
  return { registry, manager, send, configuredKey, lookups: () => lookups }
}

describe('failed authentications', () => {
  it('answer 429 with Retry-After to wrong keys from an address past its allowance, without looking them up, and to no other address (a store without listApiKeyHashes: to its keys not accepted before too)', async () => {
    const { manager, send, lookups } = await keyedRegistry({ authFailureLimit: 5 }, {}, { listApiKeyHashes: undefined })
    const { key: unseen } = await manager.createKey({ org: 'acme' })
    for (let attempt = 0; attempt < 5; attempt++) expect((await send(generateApiKey(), '10.0.0.1')).status).toBe(401)
    const lookupsWithinAllowance = lookups()
    const refused = await send(generateApiKey(), '10.0.0.1')
    await expectError(refused, 429, 'rate_limited')
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(12)
    // Without the stored keys' hashes, a stored key this process has not accepted yet is one more lookup: not made past the allowance.
    expect((await send(unseen, '10.0.0.1')).status).toBe(429)
    expect(lookups()).toBe(lookupsWithinAllowance)
    expect((await send(unseen, '10.0.0.2')).status).toBe(200)
    expect((await send('wrong', '10.0.0.2')).status).toBe(401)
  })

  it('over HTTP: never refuse a valid key, whatever wrong keys its address sent, while wrong keys from it are still refused 429', async () => {
    const { registry, manager, configuredKey } = await keyedRegistry()
    const { key: stored } = await manager.createKey({ org: 'acme' })
    const server = await serve(registry, { port: 0 })
    const send = (key: string) => fetch(`${server.url}/v1/entities`, { headers: { Authorization: `Bearer ${key}` } })
    try {
      expect((await send(stored)).status).toBe(200)
      // 100 wrong keys from the one address every client shares (no --trust-proxy behind a load balancer).
      const wrong = await Promise.all(Array.from({ length: 100 }, async () => (await send(generateApiKey())).status))
      expect(wrong.filter((status) => status === 429).length).toBeGreaterThanOrEqual(30)
      for (let round = 0; round < 3; round++) {
        expect((await send(stored)).status).toBe(200)
        expect((await send(configuredKey)).status).toBe(200)
        // Each waits for a read of the stored keys' hashes, while the allowance refills one a second.
        const answers = await Promise.all(Array.from({ length: 5 }, () => send(generateApiKey())))
        const refused = answers.filter((answer) => answer.status === 429)
        expect(refused.length).toBeGreaterThanOrEqual(3)
        expect(answers.filter((answer) => answer.status === 401)).toHaveLength(5 - refused.length)
        for (const answer of refused) expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      }
    } finally {
      await server.close()
    }
  })

  it('past the allowance, refuse a key accepted before once it is found revoked, and look it up no more', async () => {
    // Lookups not reused: each request with a stored key asks the store.
    const { manager, send, lookups } = await keyedRegistry({ authFailureLimit: 2 }, { cacheTtlMs: 0 })
    const { key, apiKey } = await manager.createKey({ org: 'acme' })
    expect((await send(key, '10.0.0.1')).status).toBe(200)
    for (let attempt = 0; attempt < 2; attempt++) expect((await send(generateApiKey(), '10.0.0.1')).status).toBe(401)
    expect((await send(key, '10.0.0.1')).status).toBe(200)
    await manager.revokeKey(apiKey.id)
    const before = lookups()
    await expectError(await send(key, '10.0.0.1'), 429, 'rate_limited')
    await expectError(await send(key, '10.0.0.1'), 429, 'rate_limited')
    expect(lookups()).toBe(before + 1)
  })

  it('are not counted where the address is unknown, nor when the limit is 0', async () => {
    for (const [limit, address] of [[5, undefined], [0, '10.0.0.1']] as const) {
      const { send } = await keyedRegistry({ authFailureLimit: limit })
      for (let attempt = 0; attempt < 20; attempt++) expect((await send('wrong', address)).status).toBe(401)
    }
  })

  it('over HTTP: of 1,500 wrong keys sent 250 at once, about the first 60 are answered 401 and the rest 429', async () => {
    const { registry } = await keyedRegistry()
    const server = await serve(registry, { port: 0 })
    try {
      const started = performance.now()
      const statuses: number[] = []
      // 250 at once stays within the listen backlog (511): 1,500 connections at once were reset on a busy machine.
      for (let wave = 0; wave < 6; wave++) {
        const answered = await Promise.all(
          Array.from({ length: 250 }, () => fetch(`${server.url}/v1/entities`, { headers: { Authorization: `Bearer ${generateApiKey()}` } }).then((response) => response.status)),
        )
        statuses.push(...answered)
      }
      // The allowance refills at one a second while they are answered.
      const refilled = Math.ceil((performance.now() - started) / 1000)
      const refused = statuses.filter((status) => status === 401).length
      expect(refused).toBeGreaterThanOrEqual(60)
      expect(refused).toBeLessThanOrEqual(60 + refilled)
      expect(statuses.filter((status) => status === 429)).toHaveLength(1500 - refused)
    } finally {
      await server.close()
    }
  })

  it('behind a trusted proxy are counted by the address the proxy appended to X-Forwarded-For', async () => {
    const { registry } = await keyedRegistry({ authFailureLimit: 2 })
    const server = await serve(registry, { port: 0, trustProxy: true })
    const send = (forwardedFor: string) => fetch(`${server.url}/v1/entities`, { headers: { Authorization: 'Bearer wrong', 'X-Forwarded-For': forwardedFor } }).then((response) => response.status)
    try {
      // What a client puts first is its own to choose; only the proxy's last entry counts.
      expect([await send('1.1.1.1, 10.0.0.1'), await send('2.2.2.2, 10.0.0.1'), await send('3.3.3.3, 10.0.0.1')]).toEqual([401, 401, 429])
      expect(await send('1.1.1.1, 10.0.0.2')).toBe(401)
    } finally {
      await server.close()
    }
  })
})

describe('failed authentications past the allowance, with keys stored in SQLite', () => {
  /**
   * A registry over a SQLite file, served over HTTP, whose key reads are counted. Keys are created and
   * revoked through a second connection to the file, as `entity-registry keys` does from its own process.
   */
  async function sqliteRegistry(authFailureLimit: number) {
    const directory = await mkdtemp(join(tmpdir(), 'er-auth-limits-'))
    const file = join(directory, 'registry.sqlite')
    const store = await createSqliteStore({ file })
    const operator = await createSqliteStore({ file })
    const reads = { hashes: 0, lookups: 0 }
    const counted: ApiKeyStore = {
      ...store,
      listApiKeyHashes: () => (reads.hashes++, store.listApiKeyHashes!()),
      findApiKey: (hash) => (reads.lookups++, store.findApiKey(hash)),
    }
    const server = await serve(createRegistry({ store, auth: createApiKeyAuthenticator({ store: counted }), authFailureLimit }), { port: 0 })
    const send = (key: string) => fetch(`${server.url}/v1/entities?page[limit]=1`, { headers: { Authorization: `Bearer ${key}` } })
    const close = async () => {
      await server.close()
      await Promise.all([store.close(), operator.close()])
      await rm(directory, { recursive: true, force: true })
    }
    return { send, manager: createKeyManager(operator), reads, close }
  }

  const expectRefusedForFailures = async (response: Response) => {
    await expectError(response, 429, 'rate_limited')
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
  }

  it('serve a key stored after the address went past it on its first request, while wrong keys still answer 429 with Retry-After', async () => {
    const { send, manager, reads, close } = await sqliteRegistry(3)
    try {
      for (let attempt = 0; attempt < 3; attempt++) expect((await send(generateApiKey())).status).toBe(401)
      await expectRefusedForFailures(await send(generateApiKey()))
      // The stored keys' hashes were read before the key below existed.
      expect(reads.hashes).toBe(1)
      const { key } = await manager.createKey({ org: 'acme' })
      expect((await send(key)).status).toBe(200)
      expect(reads.hashes).toBe(2)
      await expectRefusedForFailures(await send(generateApiKey()))
      expect((await send(key)).status).toBe(200)
    } finally {
      await close()
    }
  })

  it('read the stored keys\' hashes at most twice for 100 wrong keys at once, looking none of them up, and serve a valid key among them', async () => {
    const { send, manager, reads, close } = await sqliteRegistry(3)
    try {
      for (let attempt = 0; attempt < 3; attempt++) expect((await send(generateApiKey())).status).toBe(401)
      const { key } = await manager.createKey({ org: 'acme' })
      const lookupsBefore = reads.lookups
      const [valid, ...wrong] = await Promise.all([send(key), ...Array.from({ length: 100 }, () => send(generateApiKey()))])
      expect(valid!.status).toBe(200)
      expect(wrong.map((response) => response.status)).toEqual(Array(100).fill(429))
      expect(reads.hashes).toBeGreaterThanOrEqual(1)
      expect(reads.hashes).toBeLessThanOrEqual(2)
      // The valid key's lookup, and none for the wrong ones.
      expect(reads.lookups).toBe(lookupsBefore + 1)
    } finally {
      await close()
    }
  })

  it('refuse a revoked key, whether revoked before or after the hashes were read', async () => {
    const { send, manager, reads, close } = await sqliteRegistry(2)
    try {
      const [before, after] = [await manager.createKey({ org: 'acme' }), await manager.createKey({ org: 'acme' })]
      await manager.revokeKey(before.apiKey.id)
      for (let attempt = 0; attempt < 2; attempt++) expect((await send(generateApiKey())).status).toBe(401)
      await expectRefusedForFailures(await send(generateApiKey()))
      await manager.revokeKey(after.apiKey.id)
      const lookupsBefore = reads.lookups
      // Read while active, its lookup finds it revoked; revoked before the read, it is not among the hashes.
      await expectRefusedForFailures(await send(after.key))
      await expectRefusedForFailures(await send(before.key))
      expect(reads.lookups).toBe(lookupsBefore + 1)
    } finally {
      await close()
    }
  })
})

describe('rate limits', () => {
  /** A real token bucket whose keys are recorded. */
  const recording = (limit: number) => {
    const bucket = createTokenBucketRateLimiter({ limit })
    const keys: string[] = []
    const limiter: RateLimiter = { take: (key) => (keys.push(key), bucket.take(key)) }
    return { limiter, keys }
  }

  it('count each key by its public id, never by the key or its hash', async () => {
    const { limiter, keys } = recording(10)
    const { manager, send } = await keyedRegistry({ rateLimit: limiter })
    const { key, apiKey } = await manager.createKey({ org: 'acme' })
    expect((await send(key)).status).toBe(200)
    expect(keys).toEqual([`key:${apiKey.id}`])
  })

  it('count all the keys of an organization together with rateLimitScope org', async () => {
    const { limiter, keys } = recording(3)
    const { manager, send } = await keyedRegistry({ rateLimit: limiter, rateLimitScope: 'org' })
    const [first, second, other] = [await manager.createKey({ org: 'acme' }), await manager.createKey({ org: 'acme' }), await manager.createKey({ org: 'zeta' })]
    expect([await send(first.key), await send(second.key), await send(first.key)].map((response) => response.status)).toEqual([200, 200, 200])
    await expectError(await send(second.key), 429, 'rate_limited')
    expect((await send(other.key)).status).toBe(200)
    expect(new Set(keys)).toEqual(new Set(['org:acme', 'org:zeta']))
  })
})
