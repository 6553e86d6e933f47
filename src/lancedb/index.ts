/** `entity-registry/lancedb`: the default search index, on LanceDB. */
export { createLancedbSearchIndex, type LancedbSearchIndexOptions } from './lancedb-search-index.js'
