/** The index inside PostgreSQL on its own (PGlite with pg_trgm): its statistics and passages as it is written, its upgrade, and its start-up errors. */
import { PGlite } from '@electric-sql/pglite'
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm'
import { Kysely, PGliteDialect, sql } from 'kysely'
import { afterAll, describe, expect, it } from 'vitest'
import { parseGffs } from '../../src/gffs/parse.js'
import { createMemorySearchIndex } from '../../src/memory/memory-search-index.js'
import type { IndexedEntity, SearchIndex, TextHit } from '../../src/ports/search-index.js'
import { createPostgresSearchIndex } from '../../src/postgres-search/index.js'
import { bestFirst } from '../../src/search/bm25.js'
import { textQueryOf } from '../../src/search/search-service.js'
import { namesOf, tokenize, fullTextOf } from '../../src/search/text.js'

const databases: Kysely<any>[] = []
const pglite = (extensions = {}) => {
  const db = new Kysely<any>({ dialect: new PGliteDialect({ pglite: new PGlite({ extensions }) }) })
  databases.push(db)
  return db
}
afterAll(async () => {
  for (const db of databases) await db.destroy()
})
// PGlite takes 2 s to start on an idle machine, and up to 30 s on a shared one: one with pg_trgm serves both tests.
const withTrigrams = pglite({ pg_trgm })
const STARTS = { timeout: 120_000 }

function entity(id: string, snapshot: { type: string; name?: string; title?: string; localIdentifier?: string }): IndexedEntity {
  const full = { ...snapshot, texts: [] } as unknown as Parameters<typeof fullTextOf>[0]
  return { id, fields: snapshot, tokens: tokenize(fullTextOf(full)), names: namesOf(full), vector: new Float32Array(0) }
}

describe('the search index inside PostgreSQL', () => {
  it('keeps the statistics BM25 reads as entities are added, changed and removed: the same scores as the memory index', STARTS, async () => {
    const postgres = await createPostgresSearchIndex({ db: withTrigrams, dimensions: 0 })
    const memory = createMemorySearchIndex()
    const steps: Parameters<SearchIndex['apply']>[0][] = [
      {
        upserts: [
          entity('a1', { type: 'person', name: 'Amy Klobuchar', title: 'Senator for Minnesota', localIdentifier: 'K000367' }),
          entity('a2', { type: 'person', name: 'Amy Adams', title: 'Senator' }),
          entity('a3', { type: 'committee', title: 'Senate Committee on Agriculture' }),
          // No text at all: nothing to count.
          entity('a4', { type: 'organization' }),
        ],
        removals: [],
        state: { cursor: '1', embedderId: 'none' },
      },
      { upserts: [entity('a2', { type: 'person', name: 'Amelia Adams', title: 'Representative for Ohio' })], removals: ['a3', 'a4'], state: { cursor: '2', embedderId: 'none' } },
      // A name beyond ASCII letters: `muller` is a typo of it (its typos are not listed, but searched).
      { upserts: [entity('a5', { type: 'committee', title: 'House Committee on Agriculture' }), entity('a6', { type: 'person', name: 'Greta Müller' })], removals: [], state: { cursor: '3', embedderId: 'none' } },
    ]
    for (const step of steps) {
      await postgres.apply(step)
      await memory.apply(step)
    }
    expect(await postgres.state()).toEqual({ cursor: '3', embedderId: 'none' })
    // Merging the GIN indexes' pending rows changes no answer.
    await postgres.optimize()
    for (const q of ['amy senator', 'klobu', 'agriculture committee', 'adams', '"committee on agriculture"', 'senatr', 'adamz', 'muller', 'representative type:person']) {
      const { text, qualifiers } = parseGffs(q, { allowFreeText: true })
      const query = textQueryOf(text, new Map())
      const [expected, found] = await Promise.all([memory.fullText(query, qualifiers, 10), postgres.fullText(query, qualifiers, 10)])
      expect(found.map((hit) => hit.id), q).toEqual(expected.map((hit) => hit.id))
      found.forEach((hit, position) => {
        expect(hit.score, q).toBeCloseTo(expected[position]!.score, 9)
        expect(hit.matched, q).toBe(expected[position]!.matched)
      })
    }
    // Found, not only missed by both.
    expect((await postgres.fullText(textQueryOf(parseGffs('muller', { allowFreeText: true }).text, new Map()), [], 10)).map((hit) => hit.id)).toEqual(['a6'])
  })

  it('scores only the best candidates by its SQL estimate, yet ranks as scoring every match does: common words, typos, prefixes, under a prefilter', STARTS, async () => {
    const postgres = await createPostgresSearchIndex({ db: withTrigrams, dimensions: 0 })
    await postgres.clear()
    const memory = createMemorySearchIndex()
    let seed = 3
    const pick = <T>(items: readonly T[]) => items[(seed = (seed * 16807) % 2147483647) % items.length]!
    const words = ['health', 'care', 'budget', 'energy', 'water', 'school', 'farm', 'bank', 'housing', 'road', 'tax', 'trade']
    const surnames = ['klobuchar', 'gillibrand', 'kloberg', 'gillman', 'adams', 'adamson', 'warren', 'warner']
    // 1,500 entities: a common word is held by 600 and more, beyond the 200 candidates that a limit of 10 reads.
    const upserts = Array.from({ length: 1500 }, (_, n) =>
      entity(`e${n}`, {
        type: n % 3 === 0 ? 'person' : 'legislation',
        ...(n % 3 === 0 ? { name: `${pick(['amy', 'kirsten', 'john'])} ${pick(surnames)}` } : {}),
        title: Array.from({ length: 4 + (n % 3) }, () => pick(words)).join(' '),
      }),
    )
    const change = { upserts, removals: [], state: { cursor: '1', embedderId: 'none' } }
    await postgres.apply(change)
    await memory.apply(change)
    await postgres.optimize()
    // As search orders full text: every word matched first, then BM25.
    const searchOrder = (words: number) => (a: TextHit, b: TextHit) => Number(b.matched === words) - Number(a.matched === words) || bestFirst(a, b)
    for (const q of ['health', 'health budget', 'water water tax', 'klobuchr', 'gillib', 'adams warren', 'health type:person', 'budget school type:legislation']) {
      const { text, qualifiers } = parseGffs(q, { allowFreeText: true })
      const query = textQueryOf(text, new Map())
      const [every, found] = await Promise.all([memory.fullText(query, qualifiers, 10_000), postgres.fullText(query, qualifiers, 10)])
      const expected = every.sort(searchOrder(query.words.length)).slice(0, 10)
      expect(found.sort(searchOrder(query.words.length)).map((hit) => hit.id), q).toEqual(expected.map((hit) => hit.id))
      found.forEach((hit, position) => expect(hit.score, q).toBeCloseTo(expected[position]!.score, 9))
    }
  })

  it('keeps the passages and their statistics as texts are added, replaced and removed: the same hits as the memory index', STARTS, async () => {
    const postgres = await createPostgresSearchIndex({ db: withTrigrams, dimensions: 0 })
    await postgres.clear()
    const memory = createMemorySearchIndex()
    const withTexts = (id: string, snapshot: Parameters<typeof entity>[1], ...texts: string[]): IndexedEntity => ({ ...entity(id, snapshot), passages: texts.map((text) => ({ tokens: tokenize(text) })) })
    const steps: Parameters<SearchIndex['apply']>[0][] = [
      {
        upserts: [
          withTexts('b1', { type: 'legislation', title: 'Lighthouse Act' }, 'lighthouse keepers and their pensions', 'pensions of keepers retired before 1950'),
          withTexts('b2', { type: 'legislation', title: 'Volcano Act' }, 'volcano monitoring stations and their keepers'),
          withTexts('b3', { type: 'legislation', title: 'Pensions Act' }, 'retirement of federal employees'),
          entity('p1', { type: 'person', name: 'Amy Keepers' }),
        ],
        removals: [],
        state: { cursor: '1', embedderId: 'none' },
      },
      // The text of b1 replaced, b2 removed (a deletion or a merge), b3's text gone.
      { upserts: [withTexts('b1', { type: 'legislation', title: 'Lighthouse Act' }, 'glacier observatory funding'), entity('b3', { type: 'legislation', title: 'Pensions Act' })], removals: ['b2'], state: { cursor: '2', embedderId: 'none' } },
      { upserts: [withTexts('b4', { type: 'committee', title: 'Committee on Lighthouses' }, 'keepers pensions hearing', 'glacier keepers')], removals: [], state: { cursor: '3', embedderId: 'none' } },
    ]
    const queries = ['keepers pensions', 'lighthouse keepers', 'volcano monitoring', 'glacier', '"keepers pensions"', 'retirement', 'keepers type:legislation', 'glacier -type:committee']
    const agree = async (step: number) => {
      for (const q of queries) {
        const { text, qualifiers } = parseGffs(q, { allowFreeText: true })
        const query = textQueryOf(text, new Map())
        const [expected, found] = await Promise.all([memory.fullText(query, qualifiers, 10), postgres.fullText(query, qualifiers, 10)])
        expect(found.map(({ score, ...hit }) => hit), `${q} (step ${step})`).toEqual(expected.map(({ score, ...hit }) => hit))
        found.forEach((hit, position) => expect(hit.score, q).toBeCloseTo(expected[position]!.score, 9))
      }
    }
    for (const [number, step] of steps.entries()) {
      await postgres.apply(step)
      await memory.apply(step)
      await agree(number)
    }
    const found = async (q: string) => (await postgres.fullText(textQueryOf(parseGffs(q, { allowFreeText: true }).text, new Map()), [], 10)).map((hit) => hit.id)
    expect(await found('volcano monitoring')).toEqual([])
    expect(await found('retirement')).toEqual([])
    expect((await found('glacier')).toSorted()).toEqual(['b1', 'b4'])
    // What the removals left: no passage of b2 or b3, and no count of their words.
    const passages = await withTrigrams.selectFrom('search_passages').select(['entity_id', 'ordinal']).orderBy('entity_id').orderBy('ordinal').execute()
    expect(passages).toEqual([
      { entity_id: 'b1', ordinal: 0 },
      { entity_id: 'b4', ordinal: 0 },
      { entity_id: 'b4', ordinal: 1 },
    ])
    const terms = await withTrigrams.selectFrom('search_terms').select(['term', 'holders']).where('field', '=', 'p').orderBy('term').execute()
    expect(terms.map(({ term, holders }) => `${term} ${holders}`)).toEqual(['fund 1', 'glacier 2', 'hear 1', 'keeper 2', 'observatori 1', 'pension 1'])
    const state = await withTrigrams.selectFrom('search_state').select(['passages', 'passage_length']).executeTakeFirstOrThrow()
    expect([Number(state.passages), Number(state.passage_length)]).toEqual([3, 8])
    // Merging the GIN indexes' pending rows changes no answer; clearing removes the passages.
    await postgres.optimize()
    await agree(steps.length)
    await postgres.clear()
    expect(await withTrigrams.selectFrom('search_passages').select('entity_id').execute()).toEqual([])
    expect(await found('glacier')).toEqual([])
  })

  it('empties an index written before passages when it opens, so that its indexer rebuilds it with them', STARTS, async () => {
    const postgres = await createPostgresSearchIndex({ db: withTrigrams, dimensions: 0 })
    await postgres.clear()
    await postgres.apply({ upserts: [entity('a1', { type: 'person', name: 'Amy Klobuchar' })], removals: [], state: { cursor: '7', embedderId: 'none' } })
    // As the version before passages left it: no passages' table, no passages' counts.
    await sql`drop table search_passages`.execute(withTrigrams)
    await sql`alter table search_state drop column passages, drop column passage_length`.execute(withTrigrams)
    const reopened = await createPostgresSearchIndex({ db: withTrigrams, dimensions: 0 })
    expect(await reopened.state()).toEqual({ cursor: null, embedderId: null })
    expect(await reopened.fullText(textQueryOf(parseGffs('klobuchar', { allowFreeText: true }).text, new Map()), [], 10)).toEqual([])
    await reopened.apply({ upserts: [{ ...entity('a1', { type: 'person', name: 'Amy Klobuchar' }), passages: [{ tokens: tokenize('farm bill hearings') }] }], removals: [], state: { cursor: '7', embedderId: 'none' } })
    expect((await reopened.fullText(textQueryOf(parseGffs('farm hearings', { allowFreeText: true }).text, new Map()), [], 10)).map((hit) => hit.id)).toEqual(['a1'])
    // Opened again, an index with passages is kept.
    await createPostgresSearchIndex({ db: withTrigrams, dimensions: 0 })
    expect(await reopened.state()).toEqual({ cursor: '7', embedderId: 'none' })
  })

  it('counts an extension only in a schema of the search path: out of it, names the schema; on it, starts', STARTS, async () => {
    const db = pglite({ pg_trgm })
    await sql`create schema elsewhere`.execute(db)
    await sql`create extension pg_trgm schema elsewhere`.execute(db)
    await expect(createPostgresSearchIndex({ db, dimensions: 0 })).rejects.toThrow(/needs the extension pg_trgm.*pg_trgm is in the schema elsewhere, which this connection's search path does not include/)
    await sql`set search_path to public, elsewhere`.execute(db)
    const index = await createPostgresSearchIndex({ db, dimensions: 0 })
    expect(await index.state()).toEqual({ cursor: null, embedderId: null })
  })

  it('refuses to start without pg_trgm, or without pgvector for an embedder that makes vectors, naming the extension and how to add it', STARTS, async () => {
    await expect(createPostgresSearchIndex({ db: pglite(), dimensions: 0 })).rejects.toThrow(/needs the extension pg_trgm.*CREATE EXTENSION pg_trgm/)
    await expect(createPostgresSearchIndex({ db: withTrigrams, dimensions: 100 })).rejects.toThrow(/needs the extension vector.*CREATE EXTENSION vector.*--embedder none/)
  })
})
