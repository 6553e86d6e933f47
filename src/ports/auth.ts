import type { RequestView } from '../http/answer.js'

/** Who a request is made by; `id` keys the rate limit and must not reveal the credential. */
export interface Principal {
  id: string
}

export interface Authenticator {
  /**
   * The principal for this bearer token, or null when the token is missing or not valid. `request`
   * is a Web `Request`, or on Node the adapter's lighter view of one.
   */
  authenticate(token: string | null, request: RequestView): Promise<Principal | null>
}

/** Where API keys are kept, as SHA-256 hashes (hex). */
export interface ApiKeyStore {
  hasKeyHash(hash: string): Promise<boolean>
  addKeyHash(hash: string): Promise<void>
  countKeys(): Promise<number>
}
