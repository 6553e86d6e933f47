/** `entity-registry/postgres-search`: the search index inside PostgreSQL, beside the store. */
export { createPostgresSearchIndex, type PostgresSearchIndexOptions } from './postgres-search-index.js'
export { pgliteSearchExtensions } from './pglite-extensions.js'
export { followIndexingLock, type IndexingLock, type IndexingLockOptions } from './indexing-lock.js'
