import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { ApiKeyStore, Authenticator } from '../ports/auth.js'

/** The only form in which a key is kept or compared: SHA-256, hex. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex')
}

/** A new random key: `er_` and 32 bytes of base64url (256 bits). */
export function generateApiKey(): string {
  return `er_${randomBytes(32).toString('base64url')}`
}

export interface ApiKeyAuthenticatorOptions {
  /** Keys given in configuration (plain text; only their hashes are kept). */
  keys?: Iterable<string>
  /** Keys kept, hashed, in the store. */
  store?: ApiKeyStore
}

/**
 * Bearer API keys. Configured keys are compared by hash in constant time; a store lookup is by
 * hash too, so neither the key nor a timing signal about it reaches the database.
 */
export function createApiKeyAuthenticator({ keys = [], store }: ApiKeyAuthenticatorOptions): Authenticator {
  const configured = [...keys].map((key) => Buffer.from(hashApiKey(key), 'hex'))
  return {
    async authenticate(token) {
      if (token === null || token === '') return null
      const hash = hashApiKey(token)
      const digest = Buffer.from(hash, 'hex')
      // Compare against every configured key, so the time taken does not depend on which matched.
      let matched = false
      for (const candidate of configured) matched = timingSafeEqual(candidate, digest) || matched
      if (!matched && store) matched = await store.hasKeyHash(hash)
      return matched ? { id: `key:${hash.slice(0, 16)}` } : null
    },
  }
}
