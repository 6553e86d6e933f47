/**
 * Every search index a suite runs against: the memory reference, LanceDB on a temporary directory
 * (alone, and with the resident index in front of it),
 * and the index inside PostgreSQL: on the test server and on PGlite with pg_trgm (full text and names:
 * neither has pgvector), and on PGlite 0.4 with pgvector (vectors too) when the devDependency
 * `pglite-vector` (npm:@electric-sql/pglite@0.4.6) is installed.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite, type Extensions } from '@electric-sql/pglite'
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm'
import { Kysely, PGliteDialect } from 'kysely'
import pg from 'pg'
import { createPostgresStore } from '../../src/kysely/index.js'
import { createLancedbSearchIndex } from '../../src/lancedb/index.js'
import { createMemorySearchIndex } from '../../src/memory/memory-search-index.js'
import type { SearchIndex } from '../../src/ports/search-index.js'
import { createPostgresSearchIndex } from '../../src/postgres-search/index.js'
import { createResidentSearchIndex } from '../../src/resident/index.js'
import { freshPostgresSchema, storeDialects } from '../stores/each-store.js'
import { withPostgresClient } from '../support/postgres-client.js'
import { POSTGRES_URL } from '../stores/each-store.js'

export interface SearchIndexKind {
  name: string
  /** Why its suites are skipped on this machine, or null when they run. */
  skipReason: string | null
  /** Whether it ranks by vectors too (an index of full text and names alone does not). */
  semantic: boolean
  open(dimensions: number): Promise<{ index: SearchIndex; dispose(): Promise<void> }>
}

/** A PostgreSQL search index over a PGlite of its own with `extensions` (full text and names alone when `dimensions` is 0). */
async function pgliteIndex(Constructor: typeof PGlite, extensions: Extensions, dimensions: number) {
  const db = new Kysely<any>({ dialect: new PGliteDialect({ pglite: new Constructor({ extensions }) }) })
  const index = await createPostgresSearchIndex({ db, dimensions })
  return { index, dispose: () => db.destroy() }
}

/** A PGlite database with pg_trgm and pgvector (PGlite 0.4.6, `pglite-vector`), for suites that open several indexes over one. */
export function pgliteVectorDatabase(): Kysely<any> {
  if (pgliteVector.skipReason !== null) throw new Error(pgliteVector.skipReason)
  return new Kysely<any>({ dialect: new PGliteDialect({ pglite: new pgliteVector.Constructor!({ extensions: pgliteVector.extensions! }) }) })
}

const postgresSkipReason = storeDialects.find((dialect) => dialect.name === 'postgres')!.skipReason

/** A PostgreSQL search index on the test server, in a schema of its own (full text and names: the server has no pgvector). */
async function postgresIndex() {
  // pg_trgm and btree_gin once in the database, in `public`, which each test's schema searches
  // after its own: made by the index, they would be in a test's schema, and go when it is dropped.
  for (const extension of ['pg_trgm', 'btree_gin']) {
    await withPostgresClient(POSTGRES_URL, (client) => client.query(`create extension if not exists ${extension} schema public`)).catch(() => undefined)
  }
  const schema = await freshPostgresSchema()
  const url = new URL(schema.url)
  url.searchParams.set('options', `${url.searchParams.get('options')},public`)
  const store = await createPostgresStore({ pool: new pg.Pool({ connectionString: url.href }) })
  const index = await createPostgresSearchIndex({ db: store.db, dimensions: 0 })
  return {
    index,
    async dispose() {
      await store.close()
      await schema.drop()
    },
  }
}

/** PGlite 0.4.6 (pgvector 0.8.1) under the alias `pglite-vector`, or why it is absent. */
const pgliteVector = await (async () => {
  const name = 'pglite-vector'
  try {
    const [{ PGlite: Constructor }, { vector }, { pg_trgm: trigrams }] = await Promise.all([import(name), import(`${name}/vector`), import(`${name}/contrib/pg_trgm`)])
    return { Constructor: Constructor as typeof PGlite, extensions: { vector, pg_trgm: trigrams } as Extensions, skipReason: null }
  } catch {
    return { skipReason: `no pgvector on PGlite: add the devDependency "pglite-vector": "npm:@electric-sql/pglite@0.4.6" (0.5 ships no vector extension)` }
  }
})()

export const searchIndexKinds: SearchIndexKind[] = [
  { name: 'memory', skipReason: null, semantic: true, open: async () => ({ index: createMemorySearchIndex(), dispose: async () => {} }) },
  {
    name: 'lancedb',
    skipReason: null,
    semantic: true,
   
    async open(dimensions) {
      const directory = await mkdtemp(join(tmpdir(), 'er-lancedb-'))
      // Caches that hold almost nothing: every feature answers as well from the files themselves.
      const index = await createLancedbSearchIndex({ uri: directory, dimensions, indexCacheBytes: 1 << 20, metadataCacheBytes: 1 << 20 })
      return {
        index,
        async dispose() {
          await index.close()
          await rm(directory, { recursive: true, force: true })
        },
      }
    },
  },
  {
    // In memory in front of LanceDB (what `serve` searches over a local directory).
    name: 'resident',
    skipReason: null,
    semantic: true,
    async open(dimensions) {
      const directory = await mkdtemp(join(tmpdir(), 'er-resident-'))
      const index = await createResidentSearchIndex({ behind: await createLancedbSearchIndex({ uri: directory, dimensions }), dimensions })
      return {
        index,
        async dispose() {
          await index.close()
          await rm(directory, { recursive: true, force: true })
        },
      }
    },
  },
  // The test server has pg_trgm and no pgvector.
  { name: 'postgres', skipReason: postgresSkipReason, semantic: false, open: () => postgresIndex() },
  {
    // In memory in front of it (what `serve --search postgres` searches), following what others write there.
    name: 'resident-postgres',
    skipReason: postgresSkipReason,
    semantic: false,
    async open() {
      const { index: behind, dispose } = await postgresIndex()
      const index = await createResidentSearchIndex({ behind, dimensions: 0, othersWrite: true })
      return {
        index,
        async dispose() {
          await index.close()
          await dispose()
        },
      }
    },
  },
  { name: 'pglite', skipReason: null, semantic: false, open: () => pgliteIndex(PGlite, { pg_trgm }, 0) },
  {
    name: 'pglite-vector',
    skipReason: pgliteVector.skipReason,
    semantic: true,
   
    open: (dimensions) => pgliteIndex(pgliteVector.Constructor!, pgliteVector.extensions!, dimensions),
  },
]
