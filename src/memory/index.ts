export { createMemoryStore, type MemoryStore } from './memory-store.js'
export { createMemoryBlobStore } from './memory-blob-store.js'
