/**
 * The `--search` value that keeps the index inside the store's PostgreSQL (or PGlite) database.
 * Apart from search-setup, so that the argument parser and the composition name it without loading search.
 */
export const SEARCH_IN_DATABASE = 'postgres'
