import { sql, type Kysely, type SqlBool } from 'kysely'
import { CONTRACT_COLUMNS, CONTRACT_FIELDS } from '../contract/fields.js'
import { resolveDialect } from '../kysely/sql-dialect.js'
import type { IndexedEntity, IndexedPassage, IndexState, SearchIndex } from '../ports/search-index.js'
import { trigramsOf } from '../search/text.js'
import { createTables, dropTables, ENTITIES, ensureExtensions, GIN_INDEXES, PASSAGES, STATE, TERM_FIELDS, TERMS, writtenBeforePassages } from './schema.js'
import { documentOf, passageText, searchText, termsOf } from './text-search.js'
import { searchVectors, vectorOf, vectorText } from './vector-search.js'

export interface PostgresSearchIndexOptions {
  /**
   * The database: the store's own (`store.db` of `createPostgresStore` or `createPgliteStore`), so
   * that every instance over it shares one index. Closing the index leaves it open.
   */
  db: Kysely<any>
  /**
   * A streaming replica of `db`'s database, which searches read (`store.readDb`); the index is
   * written, and its state read, on `db`. Default `db`.
   */
  readDb?: Kysely<any>
  /**
   * The vector size of the embedder that fills the index; 0 for full text and names alone (the
   * embedder `none`), which needs no pgvector.
   */
  dimensions: number
}

/** Rows a statement inserts at most: well under PostgreSQL's 65,535 parameters. */
const INSERT_BATCH = 500
/** Rows a query of `scan` reads at once (entities of 100 dimensions: about 5 MB). */
const SCAN_BATCH = 5_000

/**
 * The search index inside PostgreSQL, beside the store: full text in a weighted `tsvector` (GIN),
 * the texts' passages in a table of their own (the same), names and typos through `pg_trgm`,
 * vectors in a pgvector column (HNSW, cosine); qualifiers are
 * the SQL of list filters. It holds no state of its own, so every instance over the database
 * searches it at once. Needs `pg_trgm`, and pgvector unless `dimensions` is 0: a clear error otherwise.
 */
export async function createPostgresSearchIndex({ db, readDb = db, dimensions }: PostgresSearchIndexOptions): Promise<SearchIndex> {
  const dialect = await resolveDialect(db, 'postgres')
  const extensions = await ensureExtensions(db, dimensions > 0)
  const [major = 0, minor = 0] = (extensions.vector ?? '0').split('.').map(Number)
  const iterativeScan = major > 0 || minor >= 8
  // An index written by a version without passages starts again empty: its indexer rebuilds it
  // from the feed (search answers meanwhile, from what is indexed so far), as LanceDB's does.
  if (await writtenBeforePassages(db)) await dropTables(db)
  await createTables(db, dialect, dimensions, extensions)

  return {
    state: () => readIndexState(db),

    async apply({ upserts, removals, state }) {
      await db.transaction().execute(async (transaction) => {
        const ids = [...removals, ...upserts.map((entity) => entity.id)]
        const old = ids.length === 0 ? [] : await transaction.deleteFrom(ENTITIES).where('id', 'in', ids).returning(['tokens', 'names']).execute()
        // An update replaces the entity's passages whole, as a removal removes them.
        const oldPassages = ids.length === 0 ? [] : await transaction.deleteFrom(PASSAGES).where('entity_id', 'in', ids).returning('tokens').execute()
        const statistics = new Statistics()
        for (const row of old) statistics.add(termsOf(row.tokens as string), termsOf(row.names as string), -1)
        for (const row of oldPassages) statistics.addPassage(termsOf(row.tokens as string), -1)
        for (const entity of upserts) {
          statistics.add(entity.tokens, entity.names, 1)
          for (const passage of entity.passages ?? []) statistics.addPassage(passage.tokens, 1)
        }
        for (let start = 0; start < upserts.length; start += INSERT_BATCH) {
          await transaction.insertInto(ENTITIES).values(upserts.slice(start, start + INSERT_BATCH).map((entity) => rowOf(entity, dimensions))).execute()
        }
        const passageRows = upserts.flatMap(passageRowsOf)
        for (let start = 0; start < passageRows.length; start += INSERT_BATCH) {
          await transaction.insertInto(PASSAGES).values(passageRows.slice(start, start + INSERT_BATCH)).execute()
        }
        await statistics.write(transaction)
        await transaction.updateTable(STATE).set({ cursor: state.cursor, embedder: state.embedderId }).execute()
      })
    },

    fullText: (query, qualifiers, limit) => searchText(readDb, dialect, query, qualifiers, limit),

    passageText: (query, qualifiers, limit) => passageText(readDb, dialect, query, qualifiers, limit),

    nearest: (vector, qualifiers, limit) => (dimensions > 0 ? searchVectors(readDb, dialect, iterativeScan, vector, qualifiers, limit) : Promise.resolve([])),

    async clear() {
      await dropTables(db)
      await createTables(db, dialect, dimensions, extensions)
    },

    async optimize() {
      // What autovacuum does in its time, on the indexer's policy: the GIN indexes' pending rows
      // merged (a search read 100,000 rows' pending list in 125 ms), the planner's statistics current,
      // and the terms' old versions gone (every batch rewrites the counts of common terms: 1,000,000
      // entities left 890,000 of them, which typo lookups read through the trigram index, 41 ms to 17).
      for (const name of GIN_INDEXES) await sql`select gin_clean_pending_list(gin) from to_regclass(${name}) as gin where gin is not null`.execute(db)
      await sql`vacuum (analyze) ${sql.table(TERMS)}`.execute(db)
      for (const table of [ENTITIES, PASSAGES]) await sql`analyze ${sql.table(table)}`.execute(db)
    },

    // Read on the primary, where the state is: what an index in front reads must be at least the state it read before.
    async *scan({ passagesUpTo = 0 } = {}) {
      const { documents, passages } = await db.selectFrom(STATE).select(['documents', 'passages']).executeTakeFirstOrThrow()
      let total: number | undefined = Number(documents)
      for (let after: string | null = null; ; ) {
        let page = entityRows(db, dimensions).orderBy('id').limit(SCAN_BATCH)
        if (after !== null) page = page.where('id', '>', after)
        const rows = await page.execute()
        if (rows.length === 0) break
        yield { entities: rows.map((row) => entityOf(row, dimensions)), withPassages: [], ...(total === undefined ? {} : { total }) }
        total = undefined
        after = rows.at(-1)!.id as string
      }
      const withTokens = Number(passages) <= passagesUpTo
      const byEntity = new Map<string, IndexedPassage[]>()
      for (let after: [string, number] | null = null; ; ) {
        let page = db.selectFrom(PASSAGES).select(withTokens ? ['entity_id', 'ordinal', 'tokens'] : ['entity_id', 'ordinal']).orderBy('entity_id').orderBy('ordinal').limit(SCAN_BATCH)
        if (after !== null) page = page.where(sql<SqlBool>`(entity_id, ordinal) > (${after[0]}, ${after[1]})`)
        const rows = await page.execute()
        if (rows.length === 0) break
        passagesByEntity(rows, withTokens, byEntity)
        const last = rows.at(-1)!
        after = [last.entity_id as string, Number(last.ordinal)]
      }
      const withPassages = [...byEntity.keys()]
      yield { entities: [], withPassages, ...(withTokens ? { passages: withPassages.map((id) => ({ id, passages: byEntity.get(id)! })) } : {}) }
    },

    // On the primary, as `scan`; a batch of ids at a time (a statement takes at most 65,535 parameters).
    async entitiesOf(ids) {
      const entities: IndexedEntity[] = []
      for (let start = 0; start < ids.length; start += SCAN_BATCH) {
        const batch = ids.slice(start, start + SCAN_BATCH)
        const rows = await entityRows(db, dimensions).where('id', 'in', batch).execute()
        const passages = passagesByEntity(await db.selectFrom(PASSAGES).select(['entity_id', 'tokens']).where('entity_id', 'in', batch).orderBy('entity_id').orderBy('ordinal').execute(), true)
        for (const row of rows) {
          const entity = entityOf(row, dimensions)
          const held = passages.get(entity.id)
          if (held !== undefined) entity.passages = held
          entities.push(entity)
        }
      }
      return entities
    },

    // The database is the store's.
    close: async () => {},
  }
}

/** The entities' rows as `entityOf` reads them: the vector in pgvector's binary form (`vector_send`), not as text to parse. */
function entityRows(db: Kysely<any>, dimensions: number) {
  const columns = ['id', ...CONTRACT_FIELDS.map((field) => CONTRACT_COLUMNS[field]), 'tokens', 'names']
  return db.selectFrom(ENTITIES).select(columns).$if(dimensions > 0, (query) => query.select(sql<Uint8Array | null>`vector_send(vector)`.as('vector')))
}

/** Passages' rows (in order) by their entity, into `byEntity`: each with its tokens (`withTokens`), else none (the entity listed alone). */
function passagesByEntity(rows: Record<string, unknown>[], withTokens: boolean, byEntity = new Map<string, IndexedPassage[]>()): Map<string, IndexedPassage[]> {
  for (const row of rows) {
    const id = row.entity_id as string
    const held = byEntity.get(id) ?? byEntity.set(id, []).get(id)!
    if (withTokens) held.push({ tokens: termsOf(row.tokens as string) })
  }
  return byEntity
}

/** An entity as the index holds it (its passages apart), from its row. */
function entityOf(row: Record<string, unknown>, dimensions: number): IndexedEntity {
  const fields: IndexedEntity['fields'] = {}
  for (const field of CONTRACT_FIELDS) {
    const value = row[CONTRACT_COLUMNS[field]]
    if (value !== null) fields[field] = value as string
  }
  return { id: row.id as string, fields, tokens: termsOf(row.tokens as string), names: termsOf(row.names as string), vector: vectorOf(row.vector as Uint8Array | null | undefined, dimensions) }
}

/** What the index inside `db` has applied (`SearchIndex.state`): on a replica, what it holds of the primary's. */
export async function readIndexState(db: Kysely<any>): Promise<IndexState> {
  const row = await db.selectFrom(STATE).select(['cursor', 'embedder']).executeTakeFirstOrThrow()
  return { cursor: row.cursor, embedderId: row.embedder }
}

function rowOf(entity: IndexedEntity, dimensions: number): Record<string, unknown> {
  const row: Record<string, unknown> = {
    id: entity.id,
    tokens: entity.tokens.join(' '),
    names: entity.names.join(' '),
    document: sql`${documentOf(entity.tokens, entity.names)}::tsvector`,
  }
  for (const field of CONTRACT_FIELDS) row[CONTRACT_COLUMNS[field]] = entity.fields[field] ?? null
  if (dimensions > 0) {
    const vector = vectorText(entity.vector)
    row.vector = vector === null ? null : sql`${vector}::vector`
  }
  return row
}

/** A passage's row: its entity's id, its place among the entity's passages, and its text as the entity's (`documentOf`, no names). */
function passageRowsOf(entity: IndexedEntity): Record<string, unknown>[] {
  return (entity.passages ?? []).map((passage, ordinal) => ({
    entity_id: entity.id,
    ordinal,
    tokens: passage.tokens.join(' '),
    document: sql`${documentOf(passage.tokens, [])}::tsvector`,
  }))
}

/**
 * What a write changes of BM25's statistics: entities, field lengths, and how many entities hold
 * each term; passages, their length, and how many passages hold each token (the passages' ranking
 * has statistics of its own, as in the memory index).
 */
class Statistics {
  private documents = 0
  private passages = 0
  private lengths = { tokens: 0, names: 0, trigrams: 0, passageTokens: 0 }
  private readonly holders = new Map<string, number>()

  add(tokens: readonly string[], names: readonly string[], sign: 1 | -1): void {
    const trigrams = trigramsOf(names.join(' '))
    this.documents += sign
    this.lengths.tokens += sign * tokens.length
    this.lengths.names += sign * names.length
    this.lengths.trigrams += sign * trigrams.length
    const fields = [
      [TERM_FIELDS.tokens, tokens],
      [TERM_FIELDS.names, names],
      [TERM_FIELDS.trigrams, trigrams],
    ] as const
    for (const [field, terms] of fields) this.hold(field, terms, sign)
  }

  addPassage(tokens: readonly string[], sign: 1 | -1): void {
    this.passages += sign
    this.lengths.passageTokens += sign * tokens.length
    this.hold(TERM_FIELDS.passageTokens, tokens, sign)
  }

  private hold(field: string, terms: readonly string[], sign: 1 | -1): void {
    for (const term of new Set(terms)) {
      const key = `${field}${term}`
      this.holders.set(key, (this.holders.get(key) ?? 0) + sign)
    }
  }

  async write(db: Kysely<any>): Promise<void> {
    const changed = [...this.holders].filter(([, delta]) => delta !== 0)
    if (changed.length > 0) {
      const fields = changed.map(([key]) => key.slice(0, 1))
      const terms = changed.map(([key]) => key.slice(1))
      const deltas = changed.map(([, delta]) => delta)
      await sql`insert into ${sql.table(TERMS)} (field, term, holders)
        select * from unnest(${fields}::text[], ${terms}::text[], ${deltas}::bigint[])
        on conflict (field, term) do update set holders = ${sql.table(TERMS)}.holders + excluded.holders`.execute(db)
      // A term nothing holds any more is no typo's candidate.
      await sql`delete from ${sql.table(TERMS)} where holders <= 0 and (field, term) in (select * from unnest(${fields}::text[], ${terms}::text[]))`.execute(db)
    }
    await db
      .updateTable(STATE)
      .set({
        documents: sql`documents + ${this.documents}`,
        token_length: sql`token_length + ${this.lengths.tokens}`,
        name_length: sql`name_length + ${this.lengths.names}`,
        trigram_length: sql`trigram_length + ${this.lengths.trigrams}`,
        passages: sql`passages + ${this.passages}`,
        passage_length: sql`passage_length + ${this.lengths.passageTokens}`,
      })
      .execute()
  }
}
