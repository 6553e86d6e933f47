export { createMemoryStore } from './memory-store.js'
export { createMemoryBlobStore } from './memory-blob-store.js'
export { createMemorySearchIndex } from './memory-search-index.js'
