import type { Connection, FullTextQuery, Occur, Query, Table, VectorQuery } from '@lancedb/lancedb'
import type { Vector as ArrowVector } from 'apache-arrow'
import type { PublicSnapshot } from '../contract/entity.js'
import { CONTRACT_COLUMNS, CONTRACT_FIELDS, type ContractField } from '../contract/fields.js'
import { matchesQualifiers } from '../gffs/evaluate.js'
import type { Qualifier } from '../gffs/types.js'
import type { IndexedEntity, IndexedPassage, IndexState, NearForm, QueryWord, ScoredHit, SearchIndex, TextHit, TextQuery } from '../ports/search-index.js'
import { passageWordsNeeded, withPassageText } from '../search/passage-ranks.js'
import { MATCH_WEIGHTS, matchesWord, trigramsOf } from '../search/text.js'
import { bestBySum, type ClauseRanking, unscoredIn } from './clause-sums.js'
import { idIn, prefilterOf, residualOf } from './where.js'

export interface LancedbSearchIndexOptions {
  /** A local directory or any LanceDB URI (`s3://bucket/path`, `gs://…`). */
  uri: string
  /** Passed to `lancedb.connect`: credentials and settings of object storage, for instance. */
  storageOptions?: Record<string, string>
  /** The vector size of the embedder that fills the index. */
  dimensions: number
  /** Rows below which vectors are searched exactly, with no ANN index (default 100,000). */
  annThreshold?: number
  /** The most bytes LanceDB keeps of the indexes it read (default 256 MB; LanceDB's own default is 6 GB). */
  indexCacheBytes?: number
  /** The most bytes LanceDB keeps of the files' metadata (default 64 MB; LanceDB's own default is 1 GB). */
  metadataCacheBytes?: number
}

/**
 * LanceDB's caches, bounded: by its defaults (6 GB of indexes, 1 GB of metadata) every version a
 * write makes stays cached, and `reindex` of 1,000,000 entities grew to 1.2 GB while writing.
 */
const INDEX_CACHE_BYTES = 256 * 1024 * 1024
const METADATA_CACHE_BYTES = 64 * 1024 * 1024

const ENTITIES = 'entities'
/** Passages of entities' texts: the entity's id and fields, the passage's tokens. */
const PASSAGES = 'passages'
/** Passages read per entity a ranking asks for: an entity's several passages count once. */
const PASSAGES_PER_HIT = 4
/** Sets of typed words asked for at most, of one size, for the passages that hold the most (5 words: 10 sets of 3). */
const MOST_WORD_SETS = 10
/** Below this many rows a prefilter scan costs less than keeping bitmaps current. */
const BITMAP_THRESHOLD = 10_000
const STATE = 'state'
/** The words of the name and identifier, indexed whole and as trigrams. */
const NAMES = 'names'
const NAME_TRIGRAMS = 'name_trigrams'
/** IVF partitions a vector search probes: 50 keep recall@100 near 0.99 at 1M rows (DESIGN 10). */
const PROBES = 50
/**
 * Under a prefilter: one that keeps few rows keeps few in each partition, so its nearest rows lie in
 * more partitions. Measured at 1M rows under a 3% prefilter, recall@100 0.94 to 0.96 at 50 probes,
 * 0.965 to 0.98 at 70 (two sets of queries), for 2 ms more.
 */
const PREFILTERED_PROBES = 70

/**
 * The default search index: LanceDB, on local disk or object storage. One table holds the contract
 * fields (prefilters), the tokens (a full-text index with positions, for phrases), the words of the
 * name and identifier twice (a full-text index of words, and one of trigrams for prefixes and
 * partial names) and the vector. Tokens and name words are made by `tokenize` and `nameWords` and
 * indexed as they are (whitespace, no further analysis), so that LanceDB matches exactly the tokens
 * and stems that the memory index and the exclusions use.
 * `@lancedb/lancedb` is loaded on first use only: an application that never searches never loads it.
 */
export async function createLancedbSearchIndex(options: LancedbSearchIndexOptions): Promise<SearchIndex> {
  const lancedb = await import('@lancedb/lancedb').catch((cause: unknown) => {
    throw new Error('the LanceDB search index needs the package @lancedb/lancedb: npm install @lancedb/lancedb apache-arrow@18.1', { cause })
  })
  const arrow = await import('apache-arrow')
  const annThreshold = options.annThreshold ?? 100_000
  const session = new lancedb.Session(BigInt(options.indexCacheBytes ?? INDEX_CACHE_BYTES), BigInt(options.metadataCacheBytes ?? METADATA_CACHE_BYTES))
  const db: Connection = await lancedb.connect(options.uri, { ...(options.storageOptions ? { storageOptions: options.storageOptions } : {}), session })

  const entitySchema = new arrow.Schema([
    new arrow.Field('id', new arrow.Utf8(), false),
    ...CONTRACT_FIELDS.map((field) => new arrow.Field(CONTRACT_COLUMNS[field], new arrow.Utf8(), true)),
    new arrow.Field('tokens', new arrow.Utf8(), false),
    new arrow.Field(NAMES, new arrow.Utf8(), false),
    new arrow.Field(NAME_TRIGRAMS, new arrow.Utf8(), false),
    new arrow.Field('vector', new arrow.FixedSizeList(options.dimensions, new arrow.Field('item', new arrow.Float32(), true)), false),
  ])
  const passageSchema = new arrow.Schema(entitySchema.fields.filter((field) => field.name !== NAMES && field.name !== NAME_TRIGRAMS && field.name !== 'vector'))
  const stateSchema = new arrow.Schema([new arrow.Field('key', new arrow.Utf8(), false), new arrow.Field('value', new arrow.Utf8(), true)])

  const tables = await db.tableNames()
  let entities: Table = tables.includes(ENTITIES) ? await db.openTable(ENTITIES) : await db.createEmptyTable(ENTITIES, entitySchema)
  let stateTable: Table = tables.includes(STATE) ? await db.openTable(STATE) : await db.createEmptyTable(STATE, stateSchema)
  let passages: Table = tables.includes(PASSAGES) ? await db.openTable(PASSAGES) : await db.createEmptyTable(PASSAGES, passageSchema)

  /** Whether every step applied since the index was opened completed (see `apply`); emptied, it holds nothing to replay over. */
  let settled = false

  async function clear() {
    for (const name of [ENTITIES, STATE, PASSAGES]) await db.dropTable(name)
    entities = await db.createEmptyTable(ENTITIES, entitySchema)
    stateTable = await db.createEmptyTable(STATE, stateSchema)
    passages = await db.createEmptyTable(PASSAGES, passageSchema)
    settled = true
  }
  // An index written by a version without the name columns, or without passages, starts again
  // empty: its indexer rebuilds it from the feed (search answers meanwhile, from what is indexed so far).
  const fromBefore = !tables.includes(PASSAGES) && (await entities.countRows()) > 0
  if (fromBefore || !(await entities.schema()).fields.some((field) => field.name === NAMES)) await clear()

  async function ensureIndexes(): Promise<void> {
    await ensureIndexesOf(entities, true)
    await ensureIndexesOf(passages, false)
  }

  /** The full-text index is made once rows exist (an index made on an empty table missed later rows in some versions). */
  async function ensureIndexesOf(table: Table, ofEntities: boolean): Promise<void> {
    const existing = (await table.listIndices()).map((index) => index.columns.join(','))
    // Updates delete by id before they add: a scalar index keeps that from scanning the table.
    if (!existing.includes('id') && (await table.countRows()) > 0) await table.createIndex('id', { config: lancedb.Index.btree() })
    // Prefilters on the fields of few values (the ones the SQL stores index too) read a bitmap, not every row.
    for (const field of ['type', 'jurisdiction', 'status', 'localType', 'authority'] as const) {
      const column = CONTRACT_COLUMNS[field]
      if (!existing.includes(column) && (await table.countRows()) >= BITMAP_THRESHOLD) await table.createIndex(column, { config: lancedb.Index.bitmap() })
    }
    const asTheyAre = { baseTokenizer: 'whitespace', lowercase: false, stem: false, removeStopWords: false, asciiFolding: false } as const
    if (!existing.includes('tokens') && (await table.countRows()) > 0) {
      await table.createIndex('tokens', { config: lancedb.Index.fts({ ...asTheyAre, withPosition: true }) })
    }
    // The passages' table has full text only.
    if (!ofEntities) return
    if (!existing.includes('vector') && (await table.countRows()) >= annThreshold) {
      // IVF_FLAT keeps exact distances within the probed partitions (DESIGN 10: recall 1.0 at 100k with 50 probes).
      await table.createIndex('vector', { config: lancedb.Index.ivfFlat({ distanceType: 'cosine' }) })
    }
    if (!existing.includes(NAMES) && (await table.countRows()) > 0) {
      await table.createIndex(NAMES, { config: lancedb.Index.fts({ ...asTheyAre, withPosition: false }) })
    }
    // Trigrams over the whole text (the n-gram tokenizer does not split words); prefix-only n-grams
    // would index only the start of the text (DESIGN 12).
    if (!existing.includes(NAME_TRIGRAMS) && (await table.countRows()) > 0) {
      await table.createIndex(NAME_TRIGRAMS, { config: lancedb.Index.fts({ ...asTheyAre, baseTokenizer: 'ngram', ngramMinLength: 3, ngramMaxLength: 3, withPosition: false }) })
    }
  }

  /** Exact semantics after the prefilter: the rows' contract fields checked as list filters check them. */
  const exact = (qualifiers: readonly Qualifier[]) => (row: Record<string, unknown>) => {
    const snapshot = { texts: [] } as unknown as Record<string, unknown>
    for (const field of CONTRACT_FIELDS) {
      const value = row[CONTRACT_COLUMNS[field]]
      if (typeof value === 'string') snapshot[field] = value
    }
    return matchesQualifiers(qualifiers, snapshot as PublicSnapshot)
  }

  /**
   * One ranking's ids: the prefilter runs in LanceDB; what it leaves out (`~`) is checked here on
   * the only columns it reads, so that a ranking without `~` takes just the ids of its rows (every
   * column more is a read per result). The score column is named so that LanceDB need not add it.
   */
  async function hitsOf(search: Query | VectorQuery, scoreColumn: '_score' | '_distance', qualifiers: readonly Qualifier[], limit: number, read: string[] = []): Promise<Record<string, unknown>[]> {
    return (await rankingOf(search, scoreColumn, qualifiers, limit, read)).rows
  }

  /** `hitsOf`, and the last score of the rows it returned when it left matching rows out (null when it returned them all). */
  async function rankingOf(search: Query | VectorQuery, scoreColumn: '_score' | '_distance', qualifiers: readonly Qualifier[], limit: number, read: string[] = []) {
    const residual = residualOf(qualifiers)
    const columns = new Set(['id', ...read, ...residual.map((qualifier) => CONTRACT_COLUMNS[qualifier.field]), scoreColumn])
    // A `~` qualifier is checked after the prefilter: ask for more rows to keep `limit` after it.
    const asked = residual.length > 0 ? limit * 4 : limit
    search.select([...columns]).limit(asked)
    const where = prefilterOf(qualifiers)
    if (where !== null) search.where(where)
    const found = await search.toArray()
    const matching = residual.length > 0 ? found.filter(exact(residual)) : found
    const rows = matching.slice(0, limit)
    // Rows left out score at most the last kept one, or, past what LanceDB returned, its last.
    const cutAt = matching.length > limit ? (rows.at(-1)![scoreColumn] as number) : found.length === asked ? (found.at(-1)![scoreColumn] as number) : null
    return { rows, cutAt }
  }

  /**
   * The best `limit` entity rows by the sum of `clauses` (as their boolean query of `Should`
   * clauses scores them), with the `read` columns: each clause asked for its best rows, then for the
   * candidates it left out (`clause-sums.ts`); null when those cannot tell the best rows. Each
   * clause asks for twice `limit`: its last score is lower, and fewer queries need the boolean query
   * after all (three words at 1M rows: 2 in 10 against 5 in 10). Entity rows only: a candidate is
   * asked again by its id, which a passage shares with its entity's others.
   */
  async function bestEntitiesBySum(clauses: readonly (() => FullTextQuery)[], qualifiers: readonly Qualifier[], limit: number, read: string[]): Promise<Record<string, unknown>[] | null> {
    // Rows not yet in the full-text indexes are scored by a scan whose statistics depend on the
    // query's filter: asked again by id, a candidate could score otherwise than in its clause.
    if (!(await allRowsInFullTextIndexes())) return null
    // Each candidate's columns come with it: read by id afterwards, 100 rows took longer than a clause.
    const candidates = new Map<string, Record<string, unknown>>()
    const rankings = await Promise.all(clauses.map(async (clause): Promise<ClauseRanking> => {
      const { rows, cutAt } = await rankingOf(entities.query().fullTextSearch(clause()), '_score', qualifiers, limit * 2, read)
      for (const row of rows) candidates.set(row.id as string, row)
      return { scores: new Map(rows.map((row) => [row.id as string, row._score as number])), cutAt }
    }))
    // The candidates passed the prefilter already: asked again by id alone.
    await Promise.all(rankings.map(async (ranking, at) => {
      const ids = unscoredIn(ranking, candidates.keys())
      if (ids.length === 0) return
      const rows = await entities.query().fullTextSearch(clauses[at]!()).where(idIn(ids)).select(['id', '_score']).limit(ids.length).toArray()
      for (const row of rows) ranking.scores.set(row.id as string, row._score as number)
    }))
    return bestBySum(rankings, limit)?.map(({ id, score }) => ({ ...candidates.get(id), _score: score })) ?? null
  }

  /**
   * The passages that hold the most of the typed words, more than half (`withPassageText` keeps no
   * others): every word, then each set of one word fewer, down to `passageWordsNeeded`; each set an
   * AND match (a passage holding just those words scores as in a ranking of any of them), a size's
   * sets at once. Ranking any of the words went through every passage of a common one, and could
   * fill `limit` with passages of fewer words (three words at 1M entities, 100,000 texts: 31 to 43
   * ms against 2 to 8). Null past `MOST_WORD_SETS` sets of a size.
   */
  async function passagesWithMostWords(query: TextQuery, qualifiers: readonly Qualifier[], limit: number): Promise<TextHit[] | null> {
    const needed = passageWordsNeeded(query.words.length)
    // Counted before any is made: 32 typed words make 565 million sets of 17, which ran a server out of memory.
    if (query.words.length === 0 || setCount(query.words.length, needed) > MOST_WORD_SETS) return null
    for (let size = query.words.length; size >= needed; size--) {
      const asked = setsOf(query.words, size).map((words) => hitsOf(passages.query().fullTextSearch(allWordsQueryOf(lancedb, { words, phrases: query.phrases })), '_score', qualifiers, limit))
      const rows = (await Promise.all(asked)).flat()
      // A passage of the words of one set holds no other typed word (it would have come at a larger size): in one set's rows only.
      if (rows.length > 0) {
        return rows
          .sort((a, b) => (b._score as number) - (a._score as number))
          .slice(0, limit)
          .map((row): TextHit => ({ id: row.id as string, score: row._score as number, matched: size }))
      }
    }
    return []
  }

  /** Whether the entities' full-text indexes (by LanceDB's default names) hold every row (the indexer's `optimize` folds new rows in). */
  async function allRowsInFullTextIndexes(): Promise<boolean> {
    const stats = await Promise.all(['tokens', NAMES, NAME_TRIGRAMS].map((column) => entities.indexStats(`${column}_idx`)))
    return stats.every((stat) => stat !== undefined && stat.numUnindexedRows === 0)
  }

  /**
   * The best rows by the sum of the clauses that may match, all the phrases matched. One clause is a
   * query of its own. Entity rows go by `bestEntitiesBySum` when nothing narrows them; the rest, and
   * what it cannot tell, by LanceDB's boolean query. A phrase narrows the rows that the boolean query
   * scores; so does a prefilter, which each query of a clause would pay for apart, and walk its rows
   * when they are fewer than a word's. At 1M rows (bench/README.md), without a prefilter: a common
   * word beside a rare one 38 ms against 71, three words 73 against 115, two rare words 9.8 against
   * 8.2; under a 3% prefilter, by clauses, a common word beside a rare one took 74 ms against 66,
   * three words 110 against 92.
   */
  async function rowsOfAnyWord(table: Table, { should, must }: ReturnType<typeof clausesOf>, withNames: boolean, qualifiers: readonly Qualifier[], limit: number, read: string[]): Promise<Record<string, unknown>[]> {
    if (must.length === 0 && should.length === 1) return hitsOf(table.query().fullTextSearch(should[0]!()), '_score', qualifiers, limit, read)
    const byClauses = withNames && must.length === 0 && prefilterOf(qualifiers) === null
    const best = byClauses ? await bestEntitiesBySum(should, qualifiers, limit, read) : null
    if (best !== null) return best
    const { Must, Should } = lancedb.Occur
    const clauses = [...should.map((clause): [Occur, FullTextQuery] => [Should, clause()]), ...must.map((clause): [Occur, FullTextQuery] => [Must, clause()])]
    return hitsOf(table.query().fullTextSearch(new lancedb.BooleanQuery(clauses)), '_score', qualifiers, limit, read)
  }

  /** Full text over the entities (`withNames`) or the passages, as `fullText` answers it. */
  async function textHitsOf(table: Table, withNames: boolean, query: TextQuery, qualifiers: readonly Qualifier[], limit: number): Promise<TextHit[]> {
    if (!withNames) {
      const hits = await passagesWithMostWords(query, qualifiers, limit)
      if (hits !== null) return hits
    }
    // Every word as typed: they all matched, with no need to read the rows' text.
    if (query.words.length > 0) {
      const rows = await hitsOf(table.query().fullTextSearch(allWordsQueryOf(lancedb, query)), '_score', qualifiers, limit)
      // Common words: when `limit` rows hold every word, they are the answer (search puts what
      // matched every word first), and ranking any of the words over every row that holds one would
      // score a large share of them (1M rows, two words under a prefilter: 6 ms against 17 and more).
      if (rows.length === limit) return rows.map((row): TextHit => ({ id: row.id as string, score: row._score as number, matched: query.words.length }))
    }
    // The hits' text is read too, to tell how many of the words each matched (LanceDB does not say).
    const read = withNames ? ['tokens', NAMES] : ['tokens']
    const rows = await rowsOfAnyWord(table, clausesOf(lancedb, query, withNames), withNames, qualifiers, limit, read)
    const hits = rows.map((row): TextHit => {
      const tokens = (row.tokens as string).split(' ')
      const names = withNames ? (row[NAMES] as string).split(' ') : []
      const trigrams = new Set(trigramsOf(names.join(' ')))
      const matches = withNames ? (word: QueryWord) => matchesWord(word, tokens, names, trigrams) : (word: QueryWord) => tokens.includes(word.token)
      return { id: row.id as string, score: row._score as number, matched: query.words.filter(matches).length }
    })
    // The trigram clause matches on any trigram: a row that matched nothing else holds some
    // trigrams of a name, not the name.
    return query.phrases.length > 0 ? hits : hits.filter((hit) => hit.matched > 0)
  }

  return {
    async state(): Promise<IndexState> {
      const rows = await stateTable.query().toArray()
      const value = (key: string) => (rows.find((row) => row.key === key)?.value as string | null | undefined) ?? null
      return { cursor: value('cursor'), embedderId: value('embedder') }
    },

    async apply({ upserts, removals, state }) {
      // One writer (the indexer): delete, then add, rather than mergeInsert (DESIGN 10: concurrent
      // mergeInsert from JS wrote duplicate rows). A delete reads every row not yet in the id index
      // (a build of 200,000 slowed from 8,000 to 4,000 a second), so entities just created are not
      // deleted, once every step since the index was opened has completed: a step that failed or was
      // cut short by a crash is applied again, over the rows it may have added.
      const gone = [...removals, ...upserts.filter((entity) => !(settled && entity.created)).map((entity) => entity.id)]
      settled = false
      for (let start = 0; start < gone.length; start += 500) {
        const ids = idIn(gone.slice(start, start + 500))
        await entities.delete(ids)
        await passages.delete(ids)
      }
      if (upserts.length > 0) await entities.add(upserts.map(rowOf))
      const passageRows = upserts.flatMap(passageRowsOf)
      if (passageRows.length > 0) await passages.add(passageRows)
      // One commit: a delete and an add were two, and a read between them found no cursor (the
      // whole feed behind, in the lag header and metrics).
      await stateTable.add(
        [
          { key: 'cursor', value: state.cursor },
          { key: 'embedder', value: state.embedderId },
        ],
        { mode: 'overwrite' },
      )
      settled = true
      await ensureIndexes()
    },

    async fullText(query, qualifiers, limit) {
      const [entityRows, passageRows] = await Promise.all([entities.countRows(), passages.countRows()])
      if (entityRows === 0) return []
      // The two sides at once: LanceDB runs each on its own threads, and neither needs the other.
      const [byEntity, byPassage] = await Promise.all([
        textHitsOf(entities, true, query, qualifiers, limit),
        passageRows === 0 ? null : textHitsOf(passages, false, query, qualifiers, limit * PASSAGES_PER_HIT),
      ])
      return byPassage === null ? byEntity : withPassageText(byEntity, byPassage, limit, query.words.length)
    },

    async passageText(query, qualifiers, limit) {
      return (await passages.countRows()) === 0 ? [] : textHitsOf(passages, false, query, qualifiers, limit * PASSAGES_PER_HIT)
    },

    async nearest(vector, qualifiers, limit) {
      if ((await entities.countRows()) === 0) return []
      const probes = prefilterOf(qualifiers) === null ? PROBES : PREFILTERED_PROBES
      const rows = await hitsOf(entities.query().nearestTo(Array.from(vector)).distanceType('cosine').nprobes(probes), '_distance', qualifiers, limit)
      // Cosine distance is 1 - similarity.
      return rows.map((row): ScoredHit => ({ id: row.id as string, score: 1 - (row._distance as number) }))
    },

    clear,

    async *scan({ passagesUpTo = 0 } = {}) {
      const columns = ['id', ...CONTRACT_FIELDS.map((field) => CONTRACT_COLUMNS[field]), 'tokens', NAMES, 'vector']
      let total: number | undefined = await entities.countRows()
      for await (const batch of entities.query().select(columns)) {
        const text = (name: string) => stringsOf(batch.getChild(name)!)
        const [ids, tokens, names] = [text('id'), text('tokens'), text(NAMES)]
        const fields = CONTRACT_FIELDS.map((field) => [field, text(CONTRACT_COLUMNS[field])] as const)
        const vectors = floatsOf(batch.getChild('vector')!, options.dimensions)
        const rows = ids.map((id, row): IndexedEntity => {
          const values: IndexedEntity['fields'] = {}
          for (const [field, column] of fields) if (column[row] !== null) values[field] = column[row]!
          return { id: id!, fields: values, tokens: wordsOf(tokens[row]!), names: wordsOf(names[row]!), vector: vectors.subarray(row * options.dimensions, (row + 1) * options.dimensions) }
        })
        yield { entities: rows, withPassages: [], ...(total === undefined ? {} : { total }) }
        total = undefined
      }
      const withTokens = (await passages.countRows()) <= passagesUpTo
      const byEntity = new Map<string, IndexedPassage[]>()
      for await (const batch of passages.query().select(withTokens ? ['id', 'tokens'] : ['id'])) {
        const [ids, tokens] = [stringsOf(batch.getChild('id')!), withTokens ? stringsOf(batch.getChild('tokens')!) : []]
        ids.forEach((id, row) => {
          const held = byEntity.get(id!) ?? byEntity.set(id!, []).get(id!)!
          if (withTokens) held.push({ tokens: wordsOf(tokens[row]!) })
        })
      }
      const withPassages = [...byEntity.keys()]
      yield { entities: [], withPassages, ...(withTokens ? { passages: withPassages.map((id) => ({ id, passages: byEntity.get(id)! })) } : {}) }
    },

    async optimize() {
      // Folds new rows into the indexes and compacts; old versions are kept an hour for readers.
      await entities.optimize({ cleanupOlderThan: new Date(Date.now() - 3_600_000) })
      await passages.optimize({ cleanupOlderThan: new Date(Date.now() - 3_600_000) })
      await stateTable.optimize({ cleanupOlderThan: new Date(Date.now() - 3_600_000) })
      await ensureIndexes()
    },

    async close() {
      entities.close()
      passages.close()
      stateTable.close()
      db.close()
    },
  }
}

/**
 * Any word may match, the more the better: the words exactly, and within their typo allowance
 * (which matches them exactly too, so an exact match scores both); their name forms whole, and by
 * trigrams. Phrases must match. Weights as the memory index's (`MATCH_WEIGHTS`). One clause a kind
 * of match, each over all the words (a clause a word cost twice as much at 1M rows), and the fuzzy
 * words grouped by their allowance. Each clause made anew where it is used (a query object is
 * LanceDB's, handed over with the search).
 */
function clausesOf(lancedb: typeof import('@lancedb/lancedb'), { words, phrases }: TextQuery, withNames: boolean): { should: (() => FullTextQuery)[]; must: (() => FullTextQuery)[] } {
  // `withNames`: an entity's row; else a passage's, matched on its words exactly (`IndexedPassage`).
  const should: (() => FullTextQuery)[] = []
  const match = (terms: string[], column: string, options: { boost: number; fuzziness?: number }) => {
    if (terms.length > 0) should.push(() => new lancedb.MatchQuery([...new Set(terms)].join(' '), column, options))
  }
  match(words.map((word) => word.token), 'tokens', { boost: MATCH_WEIGHTS.word })
  const formsAt = (forms: NearForm[], fuzziness: number) => forms.flatMap(({ form, allowance }) => (allowance === fuzziness ? [form] : []))
  for (const fuzziness of withNames ? [0, 1, 2] : []) {
    match(formsAt(words.flatMap((word) => word.near), fuzziness), 'tokens', { boost: MATCH_WEIGHTS.nearWord, fuzziness })
    match(formsAt(words.flatMap((word) => word.nearNames), fuzziness), NAMES, { boost: MATCH_WEIGHTS.nearWord, fuzziness })
  }
  match(withNames ? words.flatMap((word) => word.names) : [], NAMES, { boost: MATCH_WEIGHTS.name })
  // Any trigram matches (the n-gram clause does not apply And): `fullText` keeps the rows that hold a word.
  match(withNames ? words.flatMap((word) => word.nameParts) : [], NAME_TRIGRAMS, { boost: MATCH_WEIGHTS.nameTrigram })
  return { should, must: phrases.map((phrase) => () => new lancedb.PhraseQuery(phrase.join(' '), 'tokens')) }
}

/**
 * Every word as typed and every phrase: one AND match for the words, the phrases beside it. Without
 * phrases the match alone, not inside a boolean query: the same rows and scores, and under a
 * prefilter at 1M rows 1 to 5 ms against 6 to 12 (a boolean query pays for the prefilter apart).
 */
function allWordsQueryOf(lancedb: typeof import('@lancedb/lancedb'), { words, phrases }: TextQuery): FullTextQuery {
  const { Must } = lancedb.Occur
  const everyWord = new lancedb.MatchQuery([...new Set(words.map((word) => word.token))].join(' '), 'tokens', { operator: lancedb.Operator.And })
  if (phrases.length === 0) return everyWord
  return new lancedb.BooleanQuery([[Must, everyWord], ...phrases.map((phrase): [Occur, FullTextQuery] => [Must, new lancedb.PhraseQuery(phrase.join(' '), 'tokens')])])
}

/** How many sets of `size` there are of `count` words (`count` choose `size`; the most at `size` = half of `count`). */
function setCount(count: number, size: number): number {
  let sets = 1
  for (let chosen = 1; chosen <= size; chosen++) sets = (sets * (count - size + chosen)) / chosen
  return sets
}

/** The sets of `size` of the words, each once (a word typed twice makes some sets alike). */
function setsOf(words: readonly QueryWord[], size: number): QueryWord[][] {
  const sets = new Map<string, QueryWord[]>()
  const pick = (from: number, chosen: QueryWord[]) => {
    if (chosen.length === size) sets.set([...new Set(chosen.map((word) => word.token))].sort().join(' '), chosen)
    else for (let at = from; at <= words.length - (size - chosen.length); at++) pick(at + 1, [...chosen, words[at]!])
  }
  pick(0, [])
  return [...sets.values()]
}

/**
 * A string column's values, decoded from its buffers at once: Arrow's `get` of each row costs ten
 * times as much, and a scan of a million rows reads eight such columns.
 */
function stringsOf(vector: ArrowVector): (string | null)[] {
  const strings: (string | null)[] = []
  for (const data of vector.data) {
    const offsets = data.valueOffsets as Int32Array
    const bytes = Buffer.from(data.values.buffer, data.values.byteOffset, data.values.byteLength)
    for (let row = 0; row < data.length; row++) {
      strings.push(data.getValid(row) ? bytes.toString('utf8', offsets[row]!, offsets[row + 1]!) : null)
    }
  }
  return strings
}

/** A vector column's components, in one array (row after row). */
function floatsOf(vector: ArrowVector, dimensions: number): Float32Array {
  const floats = new Float32Array(vector.length * dimensions)
  let at = 0
  for (const data of vector.data) {
    // A slice's buffers are sliced with it (arrow's `Data.slice`): its rows start at 0.
    const values = data.children[0]!.values as Float32Array
    floats.set(values.subarray(0, data.length * dimensions), at)
    at += data.length * dimensions
  }
  return floats
}

/** The words of a column written by `rowOf` (joined by spaces; none is ''). */
function wordsOf(joined: string): string[] {
  return joined === '' ? [] : joined.split(' ')
}

function rowOf(entity: IndexedEntity): Record<string, unknown> {
  const names = entity.names.join(' ')
  return { ...fieldColumnsOf(entity), tokens: entity.tokens.join(' '), [NAMES]: names, [NAME_TRIGRAMS]: names, vector: Array.from(entity.vector) }
}

/** A passage's row carries its entity's id and fields: prefilters apply to it exactly as to the entity. */
function passageRowsOf(entity: IndexedEntity): Record<string, unknown>[] {
  const fields = fieldColumnsOf(entity)
  return (entity.passages ?? []).map((passage) => ({ ...fields, tokens: passage.tokens.join(' ') }))
}

function fieldColumnsOf(entity: IndexedEntity): Record<string, unknown> {
  const row: Record<string, unknown> = { id: entity.id }
  for (const field of CONTRACT_FIELDS) row[CONTRACT_COLUMNS[field as ContractField]] = entity.fields[field] ?? null
  return row
}
