import type { ApiKeyStore, StoredApiKey } from '../ports/auth.js'
import { generateApiKey, hashApiKey, publicIdOf } from './key-format.js'

export type ApiKeyState = 'active' | 'expired' | 'revoked'

/** A key as an account-settings page shows it: never the key, never its hash. */
export type ApiKeyInfo = Omit<StoredApiKey, 'revokedAt'> & { state: ApiKeyState }

export interface OrganizationInfo {
  name: string
  createdAt: string
  /** Keys that work now. */
  activeKeys: number
  /** All its keys, revoked and expired ones included. */
  keys: number
}

/** What happened to a key, for an audit log; it names the key by its public id only. */
export type ApiKeyEvent =
  | { event: 'api_key_created'; org: string; keyId: string; label: string | null; expiresAt: string | null }
  | { event: 'api_key_revoked'; org: string; keyId: string }

export type KeyManagerErrorCode = 'invalid_organization' | 'invalid_label' | 'invalid_expiry' | 'unknown_key' | 'unknown_organization'

/** A request the key manager refuses; `code` says why, the message says it to a person. */
export class KeyManagerError extends Error {
  constructor(
    readonly code: KeyManagerErrorCode,
    message: string,
  ) {
    super(message)
    this.name = 'KeyManagerError'
  }
}

export interface KeyManagerOptions {
  /** Told of every key created and revoked (the CLI logs them as JSON lines). */
  onEvent?: (event: ApiKeyEvent) => void
  now?: () => Date
}

export interface CreateKeyRequest {
  org: string
  label?: string
  expiresAt?: Date
}

export interface KeyManager {
  /** A new key: `key` is shown once and kept nowhere, only its hash. */
  createKey(request: CreateKeyRequest): Promise<{ key: string; apiKey: ApiKeyInfo }>
  listKeys(filter?: { org?: string }): Promise<ApiKeyInfo[]>
  /** Revokes the key with this public id (a revoked key stays revoked, at its first time). */
  revokeKey(id: string): Promise<ApiKeyInfo>
  /** Revokes every key of the organization; the keys revoked now. */
  revokeOrganization(org: string): Promise<ApiKeyInfo[]>
  listOrganizations(): Promise<OrganizationInfo[]>
}

/** Organization names: what a URL path or a log line carries as it is. */
const ORGANIZATION_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
const MAX_LABEL_LENGTH = 200
/** How often a new key's id may clash with an existing one's before giving up (48 random bits each). */
const ID_ATTEMPTS = 3

/**
 * Organizations' keys over a store: what `keys` and `orgs` on the command line do, for an application
 * that builds its own account-settings page.
 */
export function createKeyManager(store: ApiKeyStore, { onEvent, now = () => new Date() }: KeyManagerOptions = {}): KeyManager {
  const info = (key: StoredApiKey): ApiKeyInfo => ({
    id: key.id,
    org: key.org,
    label: key.label,
    createdAt: key.createdAt,
    expiresAt: key.expiresAt,
    lastUsedAt: key.lastUsedAt,
    state: stateOf(key, now()),
  })

  const revoked = (keys: StoredApiKey[], ids: string[]) =>
    keys
      .filter((key) => ids.includes(key.id))
      .map((key) => {
        onEvent?.({ event: 'api_key_revoked', org: key.org, keyId: key.id })
        return info(key)
      })

  return {
    async createKey({ org, label, expiresAt }) {
      if (!ORGANIZATION_NAME.test(org)) {
        throw new KeyManagerError('invalid_organization', `an organization name is 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit, not "${org}"`)
      }
      if (label !== undefined && (label.length > MAX_LABEL_LENGTH || /\p{Cc}/u.test(label))) {
        throw new KeyManagerError('invalid_label', `a label is at most ${MAX_LABEL_LENGTH} characters, with no control characters`)
      }
      const createdAt = now()
      if (expiresAt !== undefined && !(expiresAt.getTime() > createdAt.getTime())) {
        throw new KeyManagerError('invalid_expiry', `the expiry must be a time in the future, not ${Number.isNaN(expiresAt.getTime()) ? 'an invalid date' : expiresAt.toISOString()}`)
      }
      for (let attempt = 1; ; attempt++) {
        const key = generateApiKey()
        const stored: StoredApiKey = {
          id: publicIdOf(key),
          org,
          label: label ?? null,
          createdAt: createdAt.toISOString(),
          expiresAt: expiresAt?.toISOString() ?? null,
          lastUsedAt: null,
          revokedAt: null,
        }
        if (await store.addApiKey({ ...stored, hash: await hashApiKey(key) })) {
          onEvent?.({ event: 'api_key_created', org, keyId: stored.id, label: stored.label, expiresAt: stored.expiresAt })
          return { key, apiKey: info(stored) }
        }
        if (attempt === ID_ATTEMPTS) throw new Error(`could not find a free key id in ${ID_ATTEMPTS} attempts`)
      }
    },

    listKeys: async (filter = {}) => (await store.listApiKeys(filter)).map(info),

    async revokeKey(id) {
      const key = (await store.listApiKeys()).find((candidate) => candidate.id === id)
      if (key === undefined) throw new KeyManagerError('unknown_key', `no key has the id "${id}" (see keys list)`)
      const revokedAt = now().toISOString()
      const ids = await store.revokeApiKeys({ id }, revokedAt)
      return ids.length > 0 ? revoked([{ ...key, revokedAt }], ids)[0]! : info(key)
    },

    async revokeOrganization(org) {
      const keys = await store.listApiKeys({ org })
      if (keys.length === 0 && !(await store.listOrganizations()).some((candidate) => candidate.name === org)) {
        throw new KeyManagerError('unknown_organization', `no organization is named "${org}" (see orgs list)`)
      }
      const revokedAt = now().toISOString()
      const ids = await store.revokeApiKeys({ org }, revokedAt)
      return revoked(keys.map((key) => ({ ...key, revokedAt: key.revokedAt ?? revokedAt })), ids)
    },

    async listOrganizations() {
      const [organizations, keys] = await Promise.all([store.listOrganizations(), store.listApiKeys()])
      const time = now()
      return organizations.map(({ name, createdAt }) => {
        const own = keys.filter((key) => key.org === name)
        return { name, createdAt, activeKeys: own.filter((key) => stateOf(key, time) === 'active').length, keys: own.length }
      })
    },
  }
}

/**
 * Revoked wins over expired: revocation is what someone did about the key. A revocation counts
 * whatever its time (another instance's clock may be ahead of this one's).
 */
export function stateOf(key: Pick<StoredApiKey, 'expiresAt' | 'revokedAt'>, at: Date): ApiKeyState {
  if (key.revokedAt !== null) return 'revoked'
  if (key.expiresAt !== null && Date.parse(key.expiresAt) <= at.getTime()) return 'expired'
  return 'active'
}
