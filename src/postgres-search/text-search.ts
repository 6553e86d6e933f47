import { sql, type Expression, type Kysely, type SelectQueryBuilder, type SqlBool } from 'kysely'
import type { Qualifier } from '../gffs/types.js'
import { qualifiersToSql } from '../kysely/gffs-to-sql.js'
import type { SqlDialect } from '../kysely/sql-dialect.js'
import type { NearForm, QueryWord, TextHit, TextQuery } from '../ports/search-index.js'
import { BM25, bestFirst, idf, termsNear, textScorer, type FieldStatistics, type ScoredText } from '../search/bm25.js'
import { passagesNeedEveryWord, withPassageText } from '../search/passage-ranks.js'
import { MATCH_WEIGHTS, trigramsOf } from '../search/text.js'
import { ENTITIES, OTHER_TOKENS_WHERE, PASSAGES, STATE, TERM_FIELDS, TERMS } from './schema.js'

/** PostgreSQL refuses a lexeme of 2 KB or more; no one types one, so it is left out of the text and the queries. */
const MAX_LEXEME_BYTES = 2046
/**
 * Trigram similarity above which a vocabulary token is checked for a typo of a typed one, at least:
 * low enough for two edits in an eight-letter word, which the edit distance then decides. Longer and
 * shorter words ask for more (`typoSimilarity`): at 1,000,000 entities 0.2 read 20,000 terms for one word.
 */
const TYPO_SIMILARITY = 0.2

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
  /** A passage's place among its entity's. */
  ordinal?: number
}

type Fields = 'tokens' | 'names' | 'trigrams'

/**
 * What full text ranks: the entities, or their texts' passages (`IndexedPassage`: words matched
 * exactly, no names), each passage under its entity's id and its entity's qualifiers.
 */
interface TextSide {
  /** Its rows under the qualifiers, as candidates: the entity's id, the tokens and the name words. */
  rows(db: Kysely<any>, dialect: SqlDialect, qualifiers: readonly Qualifier[]): SelectQueryBuilder<any, any, EntityText>
  /** The table of its `document`s. */
  table: string
  /** Its count in `search_state`, and of each field its terms' field in `search_terms` and its length in `search_state` (null: the side has none). */
  statistics: { count: string; fields: Record<Fields, { field: string; length: string } | null> }
  exactWords: boolean
}

const ENTITY_TEXT: TextSide = {
  rows: (db, dialect, qualifiers) => db.selectFrom(ENTITIES).select(['id', 'tokens', 'names']).where(qualifiersToSql(qualifiers, dialect)),
  table: ENTITIES,
  statistics: {
    count: 'documents',
    fields: {
      tokens: { field: TERM_FIELDS.tokens, length: 'token_length' },
      names: { field: TERM_FIELDS.names, length: 'name_length' },
      trigrams: { field: TERM_FIELDS.trigrams, length: 'trigram_length' },
    },
  },
  exactWords: false,
}

const PASSAGE_TEXT: TextSide = {
  rows(db, dialect, qualifiers) {
    const rows = db.selectFrom(PASSAGES).select(['entity_id as id', 'tokens', sql<string>`''`.as('names'), 'ordinal'])
    // The prefilter is the entity's: the passages of the entities it keeps.
    return qualifiers.length === 0 ? rows : rows.where('entity_id', 'in', db.selectFrom(ENTITIES).select('id').where(qualifiersToSql(qualifiers, dialect)))
  },
  table: PASSAGES,
  statistics: { count: 'passages', fields: { tokens: { field: TERM_FIELDS.passageTokens, length: 'passage_length' }, names: null, trigrams: null } },
  exactWords: true,
}

/**
 * Candidates read and scored here for each hit asked for. The database orders the matching rows by
 * an estimate of BM25 (`estimateOf`) and returns these alone: a common word at 100,000 rows took
 * 1.4 s scored here row by row; exact scores then order the candidates.
 */
const CANDIDATES_PER_HIT = 5
/** Candidates at least, so that a small limit still reranks enough of the estimate's order. */
const MIN_CANDIDATES = 200

/**
 * Full text as the memory index ranks it (`textScorer`): the database finds the candidates (GIN over
 * the `tsvector` for tokens, typos and name words, the trigram index for parts of names) under the
 * qualifiers' SQL, keeps the best by its estimate, and keeps the statistics BM25 reads; the
 * candidates are scored here. The passages of the entities' texts are ranked so too, on their own
 * statistics, when there are any, and the two rankings merged (`withPassageText`).
 */
export async function searchText(db: Kysely<any>, dialect: SqlDialect, query: TextQuery, qualifiers: readonly Qualifier[], limit: number): Promise<TextHit[]> {
  const [byEntity, byPassage] = await Promise.all([
    rankSide(db, dialect, ENTITY_TEXT, query, qualifiers, limit),
    // One row read: an index without texts asks nothing more.
    passagesIndexed(db).then((any) => (any ? rankSide(db, dialect, PASSAGE_TEXT, query, qualifiers, limit) : null)),
  ])
  return byPassage === null ? byEntity.slice(0, limit) : withPassageText(byEntity, byPassage, limit, query.words.length)
}

/** The passages of texts alone, ranked as `searchText` ranks them before it merges them with the entities' (`SearchIndex.passageText`). */
export async function passageText(db: Kysely<any>, dialect: SqlDialect, query: TextQuery, qualifiers: readonly Qualifier[], limit: number): Promise<TextHit[]> {
  return (await passagesIndexed(db)) ? rankSide(db, dialect, PASSAGE_TEXT, query, qualifiers, limit) : []
}

async function passagesIndexed(db: Kysely<any>): Promise<boolean> {
  const row = await db.selectFrom(STATE).select('passages').executeTakeFirstOrThrow()
  return Number(row.passages) > 0
}

/** One side's hits, best first: every candidate scored, for `withPassageText` to merge before it cuts at `limit`. */
async function rankSide(db: Kysely<any>, dialect: SqlDialect, side: TextSide, typedQuery: TextQuery, qualifiers: readonly Qualifier[], limit: number): Promise<TextHit[]> {
  // Passages match the typed words alone: names are matched on the entity.
  const query = side.exactWords ? { ...typedQuery, words: typedQuery.words.map(({ token }) => ({ token, near: [], nearNames: [], names: [], nameParts: [] })) } : typedQuery
  const typed = query.words.map((word) => word.token)
  const names = query.words.flatMap((word) => word.names)
  const everyWord = [...new Set(typed)]
  // Independent of each other: the typos' lookup, and the prefilter's share (only the every-word step reads it).
  const fitting = (forms: NearForm[]) => forms.filter(({ form }) => fits(form))
  const [{ tokens: near, names: nearNames }, filtered] = await Promise.all([
    vocabularyNear(db, { tokens: fitting(query.words.flatMap((word) => word.near)), names: fitting(query.words.flatMap((word) => word.nearNames)) }),
    everyWord.length > 1 ? plannedRows(db, side.rows(db, dialect, qualifiers), qualifiers) : null,
  ])
  const nearby = query.words.flatMap((word) => termsNear(word.near, near))
  const nearbyNames = query.words.flatMap((word) => termsNear(word.nearNames, nearNames))
  const matches: Expression<SqlBool>[] = []
  if (query.phrases.length > 0) {
    for (const phrase of query.phrases.filter((phrase) => phrase.every(fits))) matches.push(sql<SqlBool>`document @@ ${phraseQueryOf(phrase)}::tsquery`)
    // A phrase no one can type matches nothing.
    if (matches.length < query.phrases.length) return []
  }
  const partsOfNames = query.words.flatMap((word) => word.nameParts)
  const terms = { tokens: [...typed, ...nearby], names: [...names, ...nearbyNames], trigrams: partsOfNames.flatMap(trigramsOf) }
  const known = await statisticsOf(db, side, terms)
  const count = Math.max(MIN_CANDIDATES, limit * CANDIDATES_PER_HIT)
  const estimate = estimateOf(query, { tokens: nearby, names: nearbyNames }, partsOfNames, known, side.exactWords)
  const candidatesWhere = async (match: Expression<SqlBool>) =>
    (await side.rows(db, dialect, qualifiers).where(match).orderBy(estimate, 'desc').orderBy('id').limit(count).execute()) as EntityText[]
  // Common words: when enough rows hold every word as typed, they are the answer (search puts what
  // matched every word first), and the rows holding any of them need not be ranked (two common words
  // at 1,000,000 rows: 160,000 of those against 7,000 of these).
  const onlyEveryWord = side.exactWords && everyWord.length > 1 && everyWord.every(fits) && passagesNeedEveryWord(typed.length)
  let rows: EntityText[] = []
  if (onlyEveryWord || (everyWord.length > 1 && everyWord.every(fits) && expectedHolders(known.tokens, everyWord) * Math.min(1, (filtered ?? known.tokens.count) / Math.max(1, known.tokens.count)) >= count)) {
    rows = await candidatesWhere(sql<SqlBool>`document @@ ${everyWord.map((token) => `${lexeme(token)}:D`).join(' & ')}::tsquery and ${sql.join(matches.length > 0 ? matches : [sql`true`], sql` and `)}`)
  }
  if (!onlyEveryWord && rows.length < count) {
    // Fewer: they stay candidates, beside the best of the rows that hold any word.
    const alternatives = anyOf(terms.tokens, terms.names)
    const anyWord = [...(alternatives === '' ? [] : [sql<SqlBool>`document @@ ${alternatives}::tsquery`]), ...partsOfNames.map((name) => sql<SqlBool>`names like ${containing(name)}`)]
    if (matches.length === 0 && anyWord.length === 0) return []
    const keyOf = (row: EntityText) => `${row.id} ${row.ordinal ?? ''}`
    const seen = new Set(rows.map(keyOf))
    const any = await candidatesWhere(matches.length > 0 ? sql<SqlBool>`${sql.join(matches, sql` and `)}` : sql<SqlBool>`(${sql.join(anyWord, sql` or `)})`)
    rows = [...rows, ...any.filter((row) => !seen.has(keyOf(row)))]
  }
  const candidates = rows.map((row): ScoredText => ({ id: row.id, tokens: termsOf(row.tokens), names: termsOf(row.names) }))
  if (candidates.length === 0) return []
  // The candidates' own near tokens and names of a typed word are scored too: their statistics, if not read yet.
  const unreadNear = (field: 'tokens' | 'names', formsOf: (word: QueryWord) => NearForm[]) => {
    const held = [...new Set(candidates.flatMap((candidate) => candidate[field]))]
    const read = new Set(terms[field])
    return query.words.flatMap((word) => termsNear(formsOf(word), held)).filter((term) => !read.has(term))
  }
  const unread = { tokens: unreadNear('tokens', (word) => word.near), names: unreadNear('names', (word) => word.nearNames) }
  const statistics =
    unread.tokens.length + unread.names.length === 0 ? known : await statisticsOf(db, side, { ...terms, tokens: [...terms.tokens, ...unread.tokens], names: [...terms.names, ...unread.names] })
  const phraseHolders = await Promise.all(
    query.phrases.map(async (phrase) => Number((await sql<{ holders: string }>`select count(*) as holders from ${sql.table(side.table)} where document @@ ${phraseQueryOf(phrase)}::tsquery`.execute(db)).rows[0]!.holders)),
  )
  const score = textScorer(query, { ...statistics, phraseHolders }, { exactWords: side.exactWords })
  return candidates.flatMap((candidate) => score(candidate) ?? []).sort(bestFirst)
}

/**
 * The rows of a side that the qualifiers keep, as the planner estimates them (its statistics, no rows read;
 * null with no qualifiers: every row): under a narrow prefilter few rows hold every word, and asking
 * for them first is a query wasted (two common words under a 2% prefilter at 1,000,000 rows: 140).
 */
async function plannedRows(db: Kysely<any>, kept: SelectQueryBuilder<any, any, EntityText>, qualifiers: readonly Qualifier[]): Promise<number | null> {
  if (qualifiers.length === 0) return null
  const compiled = kept.compile()
  const { rows } = await db.executeQuery<{ 'QUERY PLAN': [{ Plan: { 'Plan Rows': number } }] }>({ ...compiled, sql: `explain (format json) ${compiled.sql}` })
  return rows[0]?.['QUERY PLAN'][0]?.Plan['Plan Rows'] ?? null
}

/** `ts_rank` of a term that occurs once, at a weight of 1. */
const RANK_OF_ONE = 0.6079271

/** Rows expected to hold every one of `tokens`, were they independent. */
function expectedHolders(field: FieldStatistics, tokens: readonly string[]): number {
  return tokens.reduce((expected, token) => (expected * field.holders(token)) / Math.max(1, field.count), field.count)
}

/**
 * BM25 as the database can estimate it cheaply for every matching row, to keep the best candidates:
 * each term that the row holds adds its weight (`MATCH_WEIGHTS`) times its IDF, times how often it
 * occurs as `ts_rank` counts it (1 once, 1.25 twice); the sum shrinks with the row's distinct terms
 * as BM25's length normalization does. Rare words thus come before common ones, and a row holding
 * more of the words before one holding fewer.
 */
function estimateOf(query: TextQuery, nearby: { tokens: readonly string[]; names: readonly string[] }, partsOfNames: readonly string[], statistics: Record<Fields, FieldStatistics>, exactWords: boolean): Expression<number> {
  const weights = new Map<string, number>()
  // Keyed by the weight class the term is at (`documentOf`): D for tokens, A for name words.
  const add = (term: string, weight: number) => weights.set(term, (weights.get(term) ?? 0) + weight)
  const idfOf = (field: FieldStatistics, term: string) => idf(field, field.holders(term))
  // A typed token matches the fuzzy clause too (`textScorer`), but where words match exactly.
  for (const { token, near } of query.words) {
    if (fits(token)) add(`D${lexeme(token)}`, (MATCH_WEIGHTS.word + (!exactWords && near.some(({ form }) => form === token) ? MATCH_WEIGHTS.nearWord : 0)) * idfOf(statistics.tokens, token))
  }
  for (const token of new Set(nearby.tokens)) {
    if (fits(token) && !query.words.some((word) => word.token === token)) add(`D${lexeme(token)}`, MATCH_WEIGHTS.nearWord * idfOf(statistics.tokens, token))
  }
  for (const name of new Set(query.words.flatMap((word) => word.names))) {
    if (fits(name)) add(`A${lexeme(name)}`, MATCH_WEIGHTS.name * idfOf(statistics.names, name))
  }
  for (const name of new Set(nearby.names)) {
    if (fits(name)) add(`A${lexeme(name)}`, MATCH_WEIGHTS.nearWord * idfOf(statistics.names, name))
  }
  const parts: Expression<number>[] = [...weights].map(
    ([key, weight]) => sql<number>`${weight / RANK_OF_ONE}::float8 * ts_rank(${key.startsWith('D') ? '{1,0,0,0}' : '{0,0,0,1}'}::float4[], document, ${key.slice(1)}::tsquery)`,
  )
  for (const name of new Set(partsOfNames)) {
    const weight = MATCH_WEIGHTS.nameTrigram * trigramsOf(name).reduce((sum, gram) => sum + idfOf(statistics.trigrams, gram), 0)
    parts.push(sql<number>`case when names like ${containing(name)} then ${weight}::float8 else 0 end`)
  }
  if (parts.length === 0) return sql<number>`0::float8`
  const averageLength = statistics.tokens.averageLength + statistics.names.averageLength
  const lengthNorm = sql`1 - ${BM25.b}::float8 + ${BM25.b}::float8 * length(document) / ${Math.max(1, averageLength)}::float8`
  return sql<number>`(${sql.join(parts, sql` + `)}) / (1 + ${BM25.k1}::float8 * (${lengthNorm}))`
}

/**
 * The least trigram similarity (`pg_trgm`'s) of a word to any word within `allowance` edits of it:
 * each edit removes at most 3 of the word's `n` trigrams (the word padded as `pg_trgm` pads it) and
 * adds at most 3, so they share `n - 3a` of at most `n + 3a` (`biden` and `bidxn`: 3 of 9). Only
 * for words of ASCII letters and digits: `pg_trgm` splits others, or reads their letters by locale.
 */
function typoSimilarity({ form, allowance }: NearForm): number {
  if (!ASCII_WORD.test(form)) return TYPO_SIMILARITY
  const trigrams = new Set(trigramsOf(`  ${form} `)).size
  return (trigrams - 3 * allowance) / (trigrams + 3 * allowance)
}

/** Letters and digits: the typos of a word made of them are listed (`oneEditAway`) rather than searched. */
const ASCII_WORD = /^[a-z0-9]+$/
const ASCII_LETTERS = 'abcdefghijklmnopqrstuvwxyz0123456789'

/** The word and every word of ASCII letters and digits one edit from it (a 7-letter word: 540). */
function oneEditAway(token: string): string[] {
  const words = new Set([token])
  for (let at = 0; at <= token.length; at++) {
    if (at < token.length) words.add(token.slice(0, at) + token.slice(at + 1))
    for (const letter of ASCII_LETTERS) {
      words.add(token.slice(0, at) + letter + token.slice(at))
      if (at < token.length) words.add(token.slice(0, at) + letter + token.slice(at + 1))
    }
  }
  return [...words]
}

/**
 * The indexed tokens and name words that may be typos of the near forms of typed words, each field's
 * of its own (`termsNear` decides), in one statement; a form matched exactly is looked up by key. A word of ASCII letters
 * and digits allowed one edit has its ASCII typos listed and looked up by key, and the trigram
 * index of the tokens of other letters searched: the trigram index of every token read 5,000 terms
 * for a 5-letter prefix of a surname at 1,000,000 entities (17 ms idle), which share 2 of its 6
 * trigrams, more than an edit keeps. Other words ask the trigram index of every token.
 */
async function vocabularyNear(db: Kysely<any>, forms: Record<'tokens' | 'names', readonly NearForm[]>): Promise<Record<'tokens' | 'names', string[]>> {
  const fields = (['tokens', 'names'] as const).filter((field) => forms[field].length > 0)
  if (fields.length === 0) return { tokens: [], names: [] }
  const lookups = fields.map((field) => {
    // Looked up by key: the forms matched exactly, and the listed typos of those allowed one edit.
    const exact = forms[field].filter(({ allowance }) => allowance === 0).map(({ form }) => form)
    const listed = forms[field].filter(({ form, allowance }) => allowance === 1 && ASCII_WORD.test(form)).map(({ form }) => form)
    const searched = forms[field].filter(({ form, allowance }) => allowance > 0 && !listed.includes(form)).map(({ form }) => sql<SqlBool>`(field = ${TERM_FIELDS[field]} and term % ${form})`)
    // Names are folded to ASCII letters where they can be: no other names to search.
    const others = field === 'tokens' ? listed.map((token) => sql<SqlBool>`(${OTHER_TOKENS_WHERE} and term % ${token})`) : []
    return { field: TERM_FIELDS[field], keyed: [...new Set([...exact, ...listed.flatMap(oneEditAway)])], conditions: [...others, ...searched] }
  })
  const conditions = lookups.flatMap((lookup) => lookup.conditions)
  // A margin below the bound, for pg_trgm's single-precision arithmetic.
  const fuzzy = fields.flatMap((field) => forms[field].filter(({ allowance }) => allowance > 0))
  const threshold = Math.max(TYPO_SIMILARITY, Math.min(1, ...fuzzy.map(typoSimilarity)) - 0.01)
  const rows = await db.transaction().execute(async (transaction) => {
    await sql`select set_config('pg_trgm.similarity_threshold', ${String(threshold)}, true)`.execute(transaction)
    // The keys joined apart from the trigram searches (a term found both ways listed once), so that
    // the primary key is probed for each: in one condition with them (`or`), a join made PostgreSQL
    // read every term (98 ms at 1,000,000 entities), and `term = any(…)` took the trigram index for
    // each of some 300 typos on a small index (0.3 to 0.7 s over the demo's 6,800 terms).
    const parts = [
      ...lookups
        .filter(({ keyed }) => keyed.length > 0)
        .map(({ field, keyed }) => sql`select t.field, t.term from unnest(${keyed}::text[]) as typed(term) join ${sql.table(TERMS)} as t on t.field = ${field} and t.term = typed.term where t.holders > 0`),
      ...(conditions.length === 0 ? [] : [sql`select field, term from ${sql.table(TERMS)} where holders > 0 and (${sql.join(conditions, sql` or `)})`]),
    ]
    return (await sql<{ field: string; term: string }>`${sql.join(parts, sql` union `)}`.execute(transaction)).rows
  })
  const termsOf = (field: 'tokens' | 'names') => rows.filter((row) => row.field === TERM_FIELDS[field]).map((row) => row.term)
  return { tokens: termsOf('tokens'), names: termsOf('names') }
}

/** BM25's statistics of a side's three fields, for the terms a query scores (a field the side has not: none held, of no length). */
async function statisticsOf(db: Kysely<any>, side: TextSide, terms: Record<Fields, string[]>): Promise<Record<Fields, FieldStatistics>> {
  const { count: countColumn, fields } = side.statistics
  const kept = (Object.keys(terms) as Fields[]).flatMap((name) => {
    const field = fields[name]
    return field === null ? [] : [{ name, ...field }]
  })
  const pairs = kept.flatMap(({ name, field }) => [...new Set(terms[name])].map((term) => [field, term] as const))
  const [state, rows] = await Promise.all([
    db
      .selectFrom(STATE)
      .select([countColumn, ...kept.map(({ length }) => length)])
      .executeTakeFirstOrThrow() as Promise<Record<string, unknown>>,
    pairs.length === 0
      ? []
      : db
          .selectFrom(TERMS)
          .select(['field', 'term', 'holders'])
          .where(sql<SqlBool>`(field, term) in (select * from unnest(${pairs.map(([field]) => field)}::text[], ${pairs.map(([, term]) => term)}::text[]))`)
          .execute(),
  ])
  const count = Number(state[countColumn])
  const holders = new Map<string, number>()
  for (const row of rows) holders.set(`${row.field} ${row.term}`, Number(row.holders))
  const statisticsOfField = (name: Fields): FieldStatistics => {
    const field = fields[name]
    return {
      count,
      averageLength: field === null ? 0 : Number(state[field.length]) / Math.max(1, count),
      holders: (term) => (field === null ? 0 : (holders.get(`${field.field} ${term}`) ?? 0)),
    }
  }
  return { tokens: statisticsOfField('tokens'), names: statisticsOfField('names'), trigrams: statisticsOfField('trigrams') }
}
