import type { RequestView } from '../http/answer.js'

/** Who a request is made by; `id` keys the rate limit and the logs, and must not reveal the credential. */
export interface Principal {
  id: string
  /** The organization the key belongs to, when it belongs to one: rate limits may be kept by it. */
  org?: string
}

export interface Authenticator {
  /**
   * The principal for this bearer token, or null when the token is missing or not valid; given at
   * once or as a promise (an authenticator that knows at once saves a request a promise). `request`
   * is a Web `Request`, or on Node the adapter's lighter view of one.
   */
  authenticate(token: string | null, request: RequestView): Principal | null | Promise<Principal | null>
  /**
   * Optional: as `authenticate`, at a cost bounded whatever the tokens: the registry calls it for an
   * address past its limit of failed authentications, so that valid keys are served there while
   * made-up ones cost next to nothing. Null for a token it cannot verify that cheaply (the bundled
   * authenticator checks stored keys against the set of their hashes, read at most once a second).
   * Without it, such an address is refused before its key is looked at.
   */
  authenticateKnown?(token: string | null, request: RequestView): Principal | null | Promise<Principal | null>
}

/** A stored API key as the store keeps it: never the key, only its SHA-256. */
export interface StoredApiKey {
  /** The key's public id (its first characters); unique. */
  id: string
  /** The organization's name. */
  org: string
  label: string | null
  /** ISO 8601 times. */
  createdAt: string
  expiresAt: string | null
  lastUsedAt: string | null
  revokedAt: string | null
}

export interface StoredOrganization {
  name: string
  createdAt: string
}

/** Where API keys are kept, as SHA-256 hashes (hex), with the organizations they belong to. */
export interface ApiKeyStore {
  /** The key whose hash this is, revoked or expired ones included; null when there is none. */
  findApiKey(hash: string): Promise<StoredApiKey | null>
  /**
   * Adds a key, and its organization when new (created at the key's `createdAt`). False, and nothing
   * written, when a key with the same id or hash exists.
   */
  addApiKey(key: StoredApiKey & { hash: string }): Promise<boolean>
  /** Keys by organization, then creation, then id; of one organization when given. */
  listApiKeys(filter?: { org?: string }): Promise<StoredApiKey[]>
  /**
   * Sets `revokedAt` on the keys not yet revoked that have this id, or belong to this organization;
   * the ids of those revoked now.
   */
  revokeApiKeys(which: { id: string } | { org: string }, revokedAt: string): Promise<string[]>
  /** Records when keys were last used; a time earlier than the one stored is ignored. */
  recordApiKeyUse(uses: readonly { id: string; usedAt: string }[]): Promise<void>
  /**
   * Optional: the hashes of the keys not revoked, in one read. With it, a stored key is served to an
   * address past its limit of failed authentications even when this process has not accepted it
   * before (created a moment ago, or first used here); without it, only keys accepted before are.
   */
  listApiKeyHashes?(): Promise<string[]>
  /** Organizations by name. */
  listOrganizations(): Promise<StoredOrganization[]>
  countApiKeys(): Promise<number>
}
