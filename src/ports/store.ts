import type { ApiKeyStore } from './auth.js'
import type { EntityStore } from './entity-store.js'
import type { Warehouse } from './warehouse.js'

/**
 * A complete store, as the bundled ones are: reads, the write side over the same data, and API keys.
 * `createRegistry` needs only the `EntityStore` part.
 */
export interface RegistryStore extends EntityStore, ApiKeyStore {
  warehouse: Warehouse
  /** Releases the store's connections or files. */
  close(): Promise<void>
}
