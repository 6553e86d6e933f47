import { sql, type Kysely, type SqlBool } from 'kysely'
import { CONTRACT_COLUMNS } from '../contract/fields.js'
import { ENTITY_FILTER_INDEXES } from '../kysely/schema.js'
import type { SqlDialect } from '../kysely/sql-dialect.js'

/** The index's tables, beside the store's in the same database. */
export const ENTITIES = 'search_entities'
export const PASSAGES = 'search_passages'
export const TERMS = 'search_terms'
export const STATE = 'search_state'

/** The fields of `search_terms`: tokens, name words, trigrams of the names, and the passages' tokens. */
export const TERM_FIELDS = { tokens: 't', names: 'n', trigrams: 'g', passageTokens: 'p' } as const

/** What the database offers the index. */
export interface SearchExtensions {
  /** pgvector's version, null without it. */
  vector: string | null
  /** Whether `btree_gin` is there: full text under a prefilter then reads one index (`createTables`). */
  btreeGin: boolean
}

/** How a missing extension is added, for the start-up error. */
const HOW_TO_ADD = {
  pg_trgm: 'CREATE EXTENSION pg_trgm (in PostgreSQL\'s contrib, on every managed PostgreSQL; on PGlite pass pg_trgm from @electric-sql/pglite/contrib/pg_trgm)',
  vector: 'CREATE EXTENSION vector (the pgvector package: Neon, Supabase, RDS, Cloud SQL and Azure offer it; on PGlite 0.4, vector from @electric-sql/pglite/vector)',
} as const

/**
 * The extensions the index needs, created where the database has them and the role may (pg_trgm is
 * trusted: a database owner may create it). `vectors`: whether pgvector is needed (an embedder that
 * makes vectors). Missing ones are an error that names them and how to add them. An extension counts
 * only in a schema of the connection's search path: in another, `gin_trgm_ops` is out of reach, and
 * the schema is another app's (or test's) to drop, with the extension in it: `btree_gin` dropped so
 * between this check and the prefiltered index failed that index ("no default operator class").
 */
export async function ensureExtensions(db: Kysely<any>, vectors: boolean): Promise<SearchExtensions> {
  const missing: (keyof typeof HOW_TO_ADD)[] = []
  /** The schema of each extension installed out of the search path, for the error. */
  const outOfPath = new Map<string, string>()
  const versionOf = async (name: keyof typeof HOW_TO_ADD | 'btree_gin'): Promise<string | null> => {
    const installed = async () =>
      (
        await sql<{ extversion: string; schema: string; inPath: boolean }>`select e.extversion, n.nspname as schema, n.nspname = any (current_schemas(false)) as "inPath"
          from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = ${name}`.execute(db)
      ).rows[0]
    let found = await installed()
    if (found === undefined) {
      const available = await sql`select 1 from pg_available_extensions where name = ${name}`.execute(db)
      if (available.rows.length > 0) await sql`create extension if not exists ${sql.id(name)}`.execute(db).catch(() => undefined)
      found = await installed()
    }
    if (found !== undefined && !found.inPath) outOfPath.set(name, found.schema)
    return found?.inPath ? found.extversion : null
  }
  if ((await versionOf('pg_trgm')) === null) missing.push('pg_trgm')
  const vector = vectors ? await versionOf('vector') : null
  if (vectors && vector === null) missing.push('vector')
  if (missing.length > 0) {
    const without = vectors && missing.length === 1 ? '; or search by full text and names only, without vectors, with the embedder "none" (--embedder none)' : ''
    const howToAdd = (name: keyof typeof HOW_TO_ADD) => {
      const schema = outOfPath.get(name)
      return schema === undefined ? HOW_TO_ADD[name] : `${name} is in the schema ${schema}, which this connection's search path does not include: add ${schema} to it`
    }
    throw new Error(`the PostgreSQL search index needs the extension${missing.length > 1 ? 's' : ''} ${missing.join(' and ')}, which this database lacks: ${missing.map(howToAdd).join('; ')}${without}`)
  }
  // Optional: a contrib extension (trusted, as pg_trgm) that makes prefiltered full text faster.
  const btreeGin = (await versionOf('btree_gin')) !== null
  return { vector, btreeGin }
}

/**
 * The tables, made if absent. Entities hold the contract columns (so that qualifiers are the SQL of
 * list filters), their tokens and name words as text, one weighted `tsvector` (tokens at weight D,
 * name words at A) under GIN, the name words under a trigram index, and the vector under HNSW
 * (cosine) when `dimensions` > 0. Passages of the entities' texts hold their entity's id, their
 * tokens and a `tsvector` of them (weight D) under GIN. Terms hold how many entities hold each
 * token, name word and trigram, and how many passages each token (BM25's document frequencies),
 * and the entities' tokens under a trigram index (typos).
 */
export async function createTables(db: Kysely<any>, dialect: SqlDialect, dimensions: number, { btreeGin }: Pick<SearchExtensions, 'btreeGin'>): Promise<void> {
  const text = dialect.text
  let entities = db.schema.createTable(ENTITIES).ifNotExists().addColumn('id', text, (column) => column.primaryKey())
  for (const column of Object.values(CONTRACT_COLUMNS)) entities = entities.addColumn(column, text)
  entities = entities
    .addColumn('tokens', text, (column) => column.notNull())
    .addColumn('names', text, (column) => column.notNull())
    .addColumn('document', sql`tsvector`, (column) => column.notNull())
  if (dimensions > 0) entities = entities.addColumn('vector', sql`vector(${sql.lit(dimensions)})`)
  await entities.execute()
  await sql`create index if not exists search_entities_document on ${sql.table(ENTITIES)} using gin (document)`.execute(db)
  await sql`create index if not exists search_entities_names on ${sql.table(ENTITIES)} using gin (names gin_trgm_ops)`.execute(db)
  // Prefilters on the fields of few values read an index, as list filters do, not every row.
  for (const columns of ENTITY_FILTER_INDEXES) {
    await sql`create index if not exists ${sql.id(`search_entities_${columns.join('_')}`)} on ${sql.table(ENTITIES)} (${sql.join(columns.map((column) => sql.id(column)))})`.execute(db)
  }
  // With btree_gin, the fields prefilters name beside the text in one GIN index: a word under a
  // prefilter reads the postings of both together, skipping through the word's (two common words
  // under a 2% prefilter at 1,000,000 rows: 6 ms against 24 for the word's 158,000 rows, then AND).
  // Not on PGlite (`pgliteSearchExtensions` leaves btree_gin out): 0.5 failed a commit after it
  // merged the GIN indexes ("bad buffer ID: 0").
  if (btreeGin) {
    const columns = [...new Set(ENTITY_FILTER_INDEXES.flat())]
    await sql`create index if not exists ${sql.id(PREFILTERED_DOCUMENT)} on ${sql.table(ENTITIES)} using gin (${sql.join(columns.map((column) => sql.id(column)))}, document)`.execute(db)
  }
  await db.schema
    .createTable(PASSAGES)
    .ifNotExists()
    .addColumn('entity_id', text, (column) => column.notNull())
    .addColumn('ordinal', 'integer', (column) => column.notNull())
    .addColumn('tokens', text, (column) => column.notNull())
    .addColumn('document', sql`tsvector`, (column) => column.notNull())
    .addPrimaryKeyConstraint('search_passages_key', ['entity_id', 'ordinal'])
    .execute()
  // A passage's `tsvector` (2 to 3 KB) kept in its row, not in TOAST: ranking reads it for every
  // row that holds a word (a word in 100,000 passages: p50 585 ms read from TOAST, 114 ms in the rows).
  const storage = await sql<{ attstorage: string }>`select attstorage from pg_attribute where attrelid = to_regclass(${PASSAGES}) and attname = 'document'`.execute(db)
  if (storage.rows[0]?.attstorage !== 'm') await sql`alter table ${sql.table(PASSAGES)} alter column document set storage main`.execute(db)
  await sql`create index if not exists search_passages_document on ${sql.table(PASSAGES)} using gin (document)`.execute(db)
  if (dimensions > 0) await sql`create index if not exists search_entities_vector on ${sql.table(ENTITIES)} using hnsw (vector vector_cosine_ops)`.execute(db)
  await db.schema
    .createTable(TERMS)
    .ifNotExists()
    .addColumn('field', text, (column) => column.notNull())
    .addColumn('term', text, (column) => column.notNull())
    .addColumn('holders', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('search_terms_key', ['field', 'term'])
    .execute()
  await sql`create index if not exists search_terms_tokens on ${sql.table(TERMS)} using gin (term gin_trgm_ops) where field = ${sql.lit(TERM_FIELDS.tokens)}`.execute(db)
  // The name words: a typed word's typos among them as typed, unstemmed (`QueryWord.nearNames`).
  await sql`create index if not exists search_terms_names on ${sql.table(TERMS)} using gin (term gin_trgm_ops) where field = ${sql.lit(TERM_FIELDS.names)}`.execute(db)
  // The tokens of other letters than a to z and digits alone: a typed word's typos among them (`müller`
  // for `muller`), where its ASCII typos are listed and looked up by key (`vocabularyNear`).
  await sql`create index if not exists ${sql.id(OTHER_TOKENS)} on ${sql.table(TERMS)} using gin (term gin_trgm_ops) where ${OTHER_TOKENS_WHERE}`.execute(db)
  await db.schema
    .createTable(STATE)
    .ifNotExists()
    .addColumn('cursor', text)
    .addColumn('embedder', text)
    .addColumn('documents', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('token_length', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('name_length', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('trigram_length', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('passages', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('passage_length', 'bigint', (column) => column.notNull().defaultTo(0))
    .execute()
  await sql`insert into ${sql.table(STATE)} (documents) select 0 where not exists (select 1 from ${sql.table(STATE)})`.execute(db)
}

const PREFILTERED_DOCUMENT = 'search_entities_prefiltered_document'
const OTHER_TOKENS = 'search_terms_other_tokens'
/** The predicate of the index of tokens beyond ASCII letters and digits: a query names it as it is, so that the planner takes the index. */
export const OTHER_TOKENS_WHERE = sql<SqlBool>`field = ${sql.lit(TERM_FIELDS.tokens)} and term !~ '^[a-z0-9]*$'`

/** The GIN indexes, whose recent rows wait in a pending list that every search reads until it is merged (the last only with btree_gin). */
export const GIN_INDEXES = ['search_entities_document', 'search_entities_names', 'search_passages_document', 'search_terms_tokens', 'search_terms_names', OTHER_TOKENS, PREFILTERED_DOCUMENT] as const

export async function dropTables(db: Kysely<any>): Promise<void> {
  for (const table of [ENTITIES, PASSAGES, TERMS, STATE]) await db.schema.dropTable(table).ifExists().execute()
}

/**
 * Whether the schema holds an index written by a version without passages (its entities' table and
 * no passages' table), which starts again empty (`createPostgresSearchIndex`). Looked for in the
 * schema that tables are made in (`current_schema()`), not in another of the search path.
 */
export async function writtenBeforePassages(db: Kysely<any>): Promise<boolean> {
  const { rows } = await sql<{ table_name: string }>`select table_name from information_schema.tables
    where table_schema = current_schema() and table_name in (${ENTITIES}, ${PASSAGES})`.execute(db)
  return rows.length === 1 && rows[0]!.table_name === ENTITIES
}
