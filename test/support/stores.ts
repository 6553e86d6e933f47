import { createMemoryStore, type MemoryStore } from '../../src/memory/index.js'

export interface OpenedStore {
  store: MemoryStore
  close(): Promise<void>
}

/** Every store the contract suites run against. */
export const STORES: { name: string; open(): Promise<OpenedStore> }[] = [
  { name: 'memory', open: async () => ({ store: createMemoryStore(), close: async () => {} }) },
]
