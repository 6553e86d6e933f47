/**
 * The PGlite extensions the search index inside it uses: `pg_trgm`, and pgvector's `vector` where
 * the installed PGlite ships it (0.4 does, 0.5 does not; without it, search needs `--embedder none`).
 */
export async function pgliteSearchExtensions(): Promise<Record<string, unknown>> {
  // Past bundlers: an application bundling the index for a PostgreSQL server does not ship PGlite.
  const { pg_trgm } = await import(/* webpackIgnore: true */ /* turbopackIgnore: true */ '@electric-sql/pglite/contrib/pg_trgm')
  // The installed PGlite may not have it: named in a variable, and bundlers told not to resolve it
  // (Next.js's Turbopack follows the constant and fails the build where the subpath is missing).
  const vectorModule = '@electric-sql/pglite/vector'
  const vector = await import(/* webpackIgnore: true */ /* turbopackIgnore: true */ vectorModule)
    .then((module: { vector?: unknown }) => module.vector)
    .catch(() => undefined)
  return vector === undefined ? { pg_trgm } : { pg_trgm, vector }
}
