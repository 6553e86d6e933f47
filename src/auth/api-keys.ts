import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'
import type { ApiKeyStore, Authenticator } from '../ports/auth.js'

/** The only form in which a key is kept or compared: SHA-256, hex. */
export async function hashApiKey(key: string): Promise<string> {
  return keyHash(key)
}

/**
 * SHA-256 in JavaScript (noble), on every runtime: about 2 us a key, where Web Crypto's digest
 * costs 35 us on Node (a thread-pool round trip), a tenth of a whole list request.
 */
function keyHash(key: string): string {
  return bytesToHex(sha256(utf8ToBytes(key)))
}

/** A new random key: `er_` and 32 bytes of base64url (256 bits). */
export function generateApiKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32))
  const base64 = btoa(String.fromCharCode(...bytes))
  return `er_${base64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}`
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
  const configured = [...keys].map(keyHash)
  return {
    async authenticate(token) {
      if (token === null || token === '') return null
      const hash = keyHash(token)
      // Compare against every configured key, so the time taken does not depend on which matched.
      let matched = false
      for (const candidate of configured) matched = equalInConstantTime(candidate, hash) || matched
      if (!matched && store) matched = await store.hasKeyHash(hash)
      return matched ? { id: `key:${hash.slice(0, 16)}` } : null
    },
  }
}

/** Compares two hex digests of equal length without an early exit. */
function equalInConstantTime(a: string, b: string): boolean {
  let difference = a.length ^ b.length
  for (let index = 0; index < a.length; index++) difference |= a.charCodeAt(index) ^ b.charCodeAt(index % b.length)
  return difference === 0
}
