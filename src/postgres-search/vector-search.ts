import { sql, type Kysely } from 'kysely'
import type { Qualifier } from '../gffs/types.js'
import { qualifiersToSql } from '../kysely/gffs-to-sql.js'
import type { SqlDialect } from '../kysely/sql-dialect.js'
import type { ScoredHit } from '../ports/search-index.js'
import { ENTITIES } from './schema.js'

/** pgvector's HNSW visits at most this many candidates (its `ef_search` limit). */
const MAX_EF_SEARCH = 1000

/** A vector as pgvector's input reads it (bound as a parameter, cast by the database); null for none (all zeros: no cosine). */
export function vectorText(vector: Float32Array): string | null {
  return vector.some((value) => value !== 0) ? `[${Array.from(vector).join(',')}]` : null
}

/**
 * A vector from pgvector's binary form (`vector_send`: its dimensions and a reserved word, each a
 * 16-bit integer, then the components as big-endian Float32s); all zeros for none (`vectorText`).
 */
export function vectorOf(sent: Uint8Array | null | undefined, dimensions: number): Float32Array {
  const vector = new Float32Array(dimensions)
  if (sent === null || sent === undefined) return vector
  const view = new DataView(sent.buffer, sent.byteOffset, sent.byteLength)
  for (let component = 0; component < dimensions; component++) vector[component] = view.getFloat32(4 + 4 * component)
  return vector
}

/**
 * Nearest vectors by cosine (HNSW). The index visits `ef_search` candidates: as many as asked for.
 * Under a prefilter, pgvector 0.8's iterative scan goes on visiting until `limit` rows pass it, in
 * exact distance order (`strict_order`); before 0.8 a narrow prefilter can leave fewer rows.
 */
export async function searchVectors(db: Kysely<any>, dialect: SqlDialect, iterativeScan: boolean, vector: Float32Array, qualifiers: readonly Qualifier[], limit: number): Promise<ScoredHit[]> {
  const query = vectorText(vector)
  if (query === null) return []
  return db.transaction().execute(async (transaction) => {
    await sql`select set_config('hnsw.ef_search', ${String(Math.min(MAX_EF_SEARCH, Math.max(40, limit)))}, true)`.execute(transaction)
    if (iterativeScan && qualifiers.length > 0) await sql`select set_config('hnsw.iterative_scan', 'strict_order', true)`.execute(transaction)
    const distance = sql<number>`vector <=> ${query}::vector`
    const rows = await transaction
      .selectFrom(ENTITIES)
      .select(['id', distance.as('distance')])
      .where('vector', 'is not', null)
      .where(qualifiersToSql(qualifiers, dialect))
      .orderBy(distance)
      .limit(limit)
      .execute()
    // Cosine distance is 1 - similarity.
    return rows.map((row): ScoredHit => ({ id: row.id as string, score: 1 - Number(row.distance) }))
  })
}
