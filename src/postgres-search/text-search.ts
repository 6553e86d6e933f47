import { sql, type Expression, type Kysely, type SqlBool } from 'kysely'
import type { Qualifier } from '../gffs/types.js'
import { qualifiersToSql } from '../kysely/gffs-to-sql.js'
import type { SqlDialect } from '../kysely/sql-dialect.js'
import type { TextHit, TextQuery } from '../ports/search-index.js'
import { bestFirst, nearTokens, textHitOf, type FieldStatistics, type ScoredText } from '../search/bm25.js'
import { trigramsOf, typoAllowance } from '../search/text.js'
import { ENTITIES, STATE, TERM_FIELDS, TERMS } from './schema.js'

/** PostgreSQL refuses a lexeme of 2 KB or more; no one types one, so it is left out of the text and the queries. */
const MAX_LEXEME_BYTES = 2046
/**
 * Trigram similarity above which a vocabulary token is checked for a typo of a typed one: low enough
 * for one edit in a five-letter word (`biden`, `bidxn`: 0.33), which the edit distance then decides.
 */
const TYPO_SIMILARITY = '0.2'

const fits = (lexeme: string) => Buffer.byteLength(lexeme) <= MAX_LEXEME_BYTES

/** Terms as a text column holds them, space-separated (an entity with no text holds none). */
export function termsOf(column: string): string[] {
  return column === '' ? [] : column.split(' ')
}

/** A lexeme as `tsvector` and `tsquery` input read it: quoted, quotes and backslashes doubled. */
function lexeme(term: string): string {
  return `'${term.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`
}

/**
 * The weighted `tsvector` of an entity, as input text (bound as a parameter, cast by the database):
 * tokens at weight D in their positions, for words and phrases; name words at weight A after them.
 * The lexemes are our own tokens as they are, so that no text search configuration changes them.
 */
export function documentOf(tokens: readonly string[], names: readonly string[]): string {
  const entries: [string, string][] = tokens.map((token, position) => [token, `${position + 1}`])
  const namesFrom = tokens.length + 2
  entries.push(...names.map((name, position): [string, string] => [name, `${namesFrom + position}A`]))
  return entries.filter(([term]) => fits(term)).map(([term, position]) => `${lexeme(term)}:${position}`).join(' ')
}

/** Tokens and name words as the `tsquery` alternatives of words: any of them. */
function anyOf(tokens: readonly string[], names: readonly string[]): string {
  return [...new Set(tokens)].filter(fits).map((token) => `${lexeme(token)}:D`).concat([...new Set(names)].filter(fits).map((name) => `${lexeme(name)}:A`)).join(' | ')
}

function phraseQueryOf(phrase: readonly string[]): string {
  return phrase.map((token) => `${lexeme(token)}:D`).join(' <-> ')
}

/** Name words as a LIKE pattern that finds them inside the names (the trigram index answers it). */
function containing(name: string): string {
  return `%${name.replace(/[\\%_]/g, '\\$&')}%`
}

interface EntityText {
  id: string
  tokens: string
  names: string
}

/**
 * Full text as the memory index ranks it (`textHitOf`): the database finds the candidates (GIN over
 * the `tsvector` for tokens, typos and name words, the trigram index for parts of names) under the
 * qualifiers' SQL, and keeps the statistics BM25 reads; the candidates are scored here.
 */
export async function searchText(db: Kysely<any>, dialect: SqlDialect, query: TextQuery, qualifiers: readonly Qualifier[], limit: number): Promise<TextHit[]> {
  const typed = query.words.map((word) => word.token)
  const names = query.words.flatMap((word) => word.names)
  const near = await vocabularyNear(db, typed.filter((token) => typoAllowance(token) > 0 && fits(token)))
  const nearby = query.words.flatMap((word) => nearTokens(word.token, near))
  const matches: Expression<SqlBool>[] = []
  if (query.phrases.length > 0) {
    for (const phrase of query.phrases.filter((phrase) => phrase.every(fits))) matches.push(sql<SqlBool>`document @@ ${phraseQueryOf(phrase)}::tsquery`)
    // A phrase no one can type matches nothing.
    if (matches.length < query.phrases.length) return []
  }
  const rows = await db
    .selectFrom(ENTITIES)
    .select(['id', 'tokens', 'names'])
    .where(qualifiersToSql(qualifiers, dialect))
    .where((eb) => {
      if (matches.length > 0) return eb.and(matches)
      const alternatives = anyOf([...typed, ...nearby], names)
      return eb.or([
        ...(alternatives === '' ? [] : [sql<SqlBool>`document @@ ${alternatives}::tsquery`]),
        ...names.filter((name) => name.length >= 3).map((name) => sql<SqlBool>`names like ${containing(name)}`),
      ])
    })
    .execute()
  const candidates = (rows as EntityText[]).map((row): ScoredText => ({ id: row.id, tokens: termsOf(row.tokens), names: termsOf(row.names) }))
  if (candidates.length === 0) return []
  const candidateTokens = candidates.flatMap((candidate) => candidate.tokens)
  const statistics = await statisticsOf(db, {
    tokens: [...typed, ...typed.flatMap((token) => nearTokens(token, candidateTokens))],
    names,
    trigrams: names.filter((name) => name.length >= 3).flatMap(trigramsOf),
  })
  const phraseHolders = await Promise.all(
    query.phrases.map(async (phrase) => Number((await sql<{ holders: string }>`select count(*) as holders from ${sql.table(ENTITIES)} where document @@ ${phraseQueryOf(phrase)}::tsquery`.execute(db)).rows[0]!.holders)),
  )
  const hits = candidates.flatMap((candidate) => textHitOf(query, candidate, { ...statistics, phraseHolders }) ?? [])
  return hits.sort(bestFirst).slice(0, limit)
}

/** The indexed tokens that may be typos of `tokens` (trigram similarity; `nearTokens` decides). */
async function vocabularyNear(db: Kysely<any>, tokens: readonly string[]): Promise<string[]> {
  if (tokens.length === 0) return []
  return db.transaction().execute(async (transaction) => {
    await sql`select set_config('pg_trgm.similarity_threshold', ${TYPO_SIMILARITY}, true)`.execute(transaction)
    const rows = await transaction
      .selectFrom(TERMS)
      .select('term')
      .where('field', '=', TERM_FIELDS.tokens)
      .where('holders', '>', 0)
      .where((eb) => eb.or(tokens.map((token) => sql<SqlBool>`term % ${token}`)))
      .execute()
    return rows.map((row) => row.term as string)
  })
}

type Fields = 'tokens' | 'names' | 'trigrams'

/** BM25's statistics of the three fields, for the terms a query scores. */
async function statisticsOf(db: Kysely<any>, terms: Record<Fields, string[]>): Promise<Record<Fields, FieldStatistics>> {
  const state = await db.selectFrom(STATE).select(['documents', 'token_length', 'name_length', 'trigram_length']).executeTakeFirstOrThrow()
  const count = Number(state.documents)
  const holders = new Map<string, number>()
  const pairs = (Object.keys(terms) as Fields[]).flatMap((field) => [...new Set(terms[field])].map((term) => [TERM_FIELDS[field], term] as const))
  if (pairs.length > 0) {
    const rows = await db
      .selectFrom(TERMS)
      .select(['field', 'term', 'holders'])
      .where(sql<SqlBool>`(field, term) in (select * from unnest(${pairs.map(([field]) => field)}::text[], ${pairs.map(([, term]) => term)}::text[]))`)
      .execute()
    for (const row of rows) holders.set(`${row.field} ${row.term}`, Number(row.holders))
  }
  const field = (name: Fields, length: unknown): FieldStatistics => ({
    count,
    averageLength: Number(length) / Math.max(1, count),
    holders: (term) => holders.get(`${TERM_FIELDS[name]} ${term}`) ?? 0,
  })
  return { tokens: field('tokens', state.token_length), names: field('names', state.name_length), trigrams: field('trigrams', state.trigram_length) }
}
