import type { ApiKeyStore, Authenticator, Principal, StoredApiKey } from '../ports/auth.js'
import { isWellFormedApiKey, keyHash } from './key-format.js'
import { stateOf } from './key-manager.js'
import { createStoredKeyHashes } from './stored-key-hashes.js'
import { setNewest } from '../bounded-map.js'

export interface ApiKeyAuthenticatorOptions {
  /**
   * Keys given in configuration (plain text, any form; only their hashes are kept). Their principals
   * are `configured-1`, `configured-2`… in the order given, so that no part of them shows in logs.
   */
  keys?: Iterable<string>
  /** Keys kept, hashed, in the store (`createKeyManager`, `entity-registry keys create`). */
  store?: ApiKeyStore
  /**
   * How long a store lookup, found or not, is reused (default 5000 ms): a key revoked or created in
   * another process works as before for at most this long. Expiry takes effect at once.
   */
  cacheTtlMs?: number
  /**
   * Lookups kept at most (default 10,000), so that a flood of made-up keys cannot grow memory; and
   * as many keys accepted lately, with their hashes (below).
   */
  cacheSize?: number
  /** Told when recording a key's last use fails (the store away); the use is recorded at a later one. */
  onError?: (error: unknown) => void
  now?: () => number
}

export interface ApiKeyAuthenticator extends Authenticator {
  /** Writes the last-use times not yet written; call it before closing the store. */
  flush(): Promise<void>
}

/** A key's last use is written at most this often, from each instance. */
const LAST_USED_INTERVAL_MS = 60_000
/** A key's first use is written within this long. */
const LAST_USED_DELAY_MS = 1000

/**
 * Bearer API keys. Configured keys are compared by hash in constant time. A stored key is looked up
 * by its hash (neither the key nor a timing signal about it reaches the database) once its checksum
 * says it can be one, and the answer is reused for `cacheTtlMs`: most requests cost no round trip.
 */
export function createApiKeyAuthenticator({
  keys = [],
  store,
  cacheTtlMs = 5000,
  cacheSize = 10_000,
  onError = () => {},
  now = Date.now,
}: ApiKeyAuthenticatorOptions): ApiKeyAuthenticator {
  const configured = [...keys].map(keyHash)
  const configuredPrincipals: Principal[] = configured.map((_, index) => Object.freeze({ id: `configured-${index + 1}` }))
  const lookups = new Map<string, { key: Promise<StoredApiKey | null>; until: number }>()
  const lastUse = store ? createLastUseWriter(store, onError) : undefined
  // The hashes of keys accepted within cacheTtlMs, by key: a request with one skips SHA-256, the one
  // step here that costs (2 us a request). Only accepted keys are kept, in this process's memory as
  // each request's header is, and each is still compared and checked as below on every request.
  // Kept past cacheTtlMs (until found invalid, or pushed out by newer ones), they are also the keys
  // known valid, which `authenticateKnown` looks up at once.
  const accepted = new Map<string, { hash: string; until: number }>()
  const remember = (token: string, hash: string, time: number) => setNewest(accepted, token, { hash, until: time + cacheTtlMs }, cacheSize)
  // Read only once an address is past its allowance: the other stored keys `authenticateKnown` looks up.
  const storedHashes = store?.listApiKeyHashes ? createStoredKeyHashes(() => store.listApiKeyHashes!()) : undefined

  /** Concurrent requests with one key share one lookup; a failed lookup is not kept. */
  function lookUp(hash: string, time: number): Promise<StoredApiKey | null> {
    const cached = lookups.get(hash)
    if (cached !== undefined && cached.until > time) return cached.key
    const key = store!.findApiKey(hash)
    // Insertion order is expiry order: the first entry is the oldest.
    setNewest(lookups, hash, { key, until: time + cacheTtlMs }, cacheSize)
    key.catch(() => lookups.delete(hash))
    return key
  }

  /**
   * A configured key, or none, is answered at once; a stored one as a promise (its lookup). With
   * `onlyKnown`, a stored key not accepted before is looked up only when its hash is among the
   * stored keys' (read at most once a second), and null without the store's `listApiKeyHashes`.
   */
  function verify(token: string | null, onlyKnown: boolean): Principal | null | Promise<Principal | null> {
    if (token === null || token === '') return null
    const time = now()
    const known = accepted.get(token)
    const fresh = known !== undefined && known.until > time
    const hash = fresh ? known.hash : keyHash(token)
    // Compare against every configured key, so the time taken does not depend on which matched.
    let matched = -1
    for (let index = 0; index < configured.length; index++) if (equalInConstantTime(configured[index]!, hash)) matched = index
    if (matched >= 0) {
      if (!fresh) remember(token, hash, time)
      return configuredPrincipals[matched]!
    }
    if (store === undefined || !isWellFormedApiKey(token)) return null
    if (!onlyKnown || known !== undefined || storedHashes?.has(hash)) return verifyStored(token, hash, time, fresh)
    if (storedHashes === undefined) return null
    // Not among the hashes last read: perhaps created since, so a read begun after this request decides.
    return storedHashes.readAfterNow().then((hashes) => {
      if (!hashes.has(hash)) return null
      // A lookup kept from before the key was stored would refuse it: the read is newer.
      lookups.delete(hash)
      return verifyStored(token, hash, now(), false)
    })
  }

  /** A stored key's lookup: the principal of an active key, else null (and the key forgotten). */
  function verifyStored(token: string, hash: string, time: number, fresh: boolean): Promise<Principal | null> {
    return lookUp(hash, time).then((key) => {
      if (key === null || stateOf(key, new Date(time)) !== 'active') {
        accepted.delete(token)
        return null
      }
      lastUse!.used(key, time)
      if (!fresh) remember(token, hash, time)
      return { id: key.id, org: key.org }
    })
  }

  return {
    authenticate: (token) => verify(token, false),
    authenticateKnown: (token) => verify(token, true),
    flush: async () => lastUse?.flush(),
  }
}

/**
 * Last-use times, written in batches: a key's first use within a second, then at most once a
 * minute (a request never waits on it).
 */
function createLastUseWriter(store: ApiKeyStore, onError: (error: unknown) => void) {
  const written = new Map<string, number>()
  const pending = new Map<string, string>()
  let timer: ReturnType<typeof setTimeout> | undefined

  async function flush(): Promise<void> {
    clearTimeout(timer)
    timer = undefined
    if (pending.size === 0) return
    const uses = [...pending].map(([id, usedAt]) => ({ id, usedAt }))
    pending.clear()
    await store.recordApiKeyUse(uses).catch((error: unknown) => {
      for (const { id } of uses) written.delete(id)
      onError(error)
    })
  }

  return {
    used(key: StoredApiKey, time: number) {
      // Another instance may have written it lately: the stored time counts as this one's last write.
      const last = written.get(key.id) ?? (key.lastUsedAt === null ? undefined : Date.parse(key.lastUsedAt))
      if (last !== undefined && time - last < LAST_USED_INTERVAL_MS) return
      written.set(key.id, time)
      pending.set(key.id, new Date(time).toISOString())
      if (timer === undefined) {
        timer = setTimeout(() => void flush(), LAST_USED_DELAY_MS)
        // Node and Bun: a pending write does not hold the process open.
        ;(timer as { unref?: () => void }).unref?.()
      }
    },
    flush,
  }
}

/** Compares two hex digests of equal length without an early exit. */
function equalInConstantTime(a: string, b: string): boolean {
  let difference = a.length ^ b.length
  for (let index = 0; index < a.length; index++) difference |= a.charCodeAt(index) ^ b.charCodeAt(index % b.length)
  return difference === 0
}
