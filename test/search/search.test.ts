import { createHash } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { searchDocumentSchema } from '../../src/contract/schemas.js'
import { createNoEmbedder, createWordVectorEmbedder } from '../../src/embedders/index.js'
import { parseGffs } from '../../src/gffs/parse.js'
import { createLancedbSearchIndex } from '../../src/lancedb/index.js'
import { createMemorySearchIndex } from '../../src/memory/memory-search-index.js'
import { createMemoryStore } from '../../src/memory/memory-store.js'
import type { Embedder } from '../../src/ports/embedder.js'
import type { IndexedEntity, ScoredHit, SearchIndex, TextQuery } from '../../src/ports/search-index.js'
import type { RegistryStore } from '../../src/ports/store.js'
import { createIndexer, otherEmbedderOf, vectorsIdOf, type Indexer } from '../../src/search/indexer.js'
import { createSearch, fuse, textQueryOf } from '../../src/search/search-service.js'
import { loadNicknames } from '../../src/node/nicknames.js'
import { loadWordRelatives } from '../../src/node/word-relatives.js'
import { matchesWord, queryWord, queryWords, tokenize, trigramsOf } from '../../src/search/text.js'
import { DEMO_RECORDS, importDemo, testRegistry } from '../support/demo.js'
import { expectError, readDocument } from '../support/documents.js'
import { bootstrapInterval, KINDS, measure, measureByKind, pairedDifference, PARTS, readRelevanceSet, RELEVANCE_SET } from './relevance.mjs'
import { searchIndexKinds } from './each-search-index.js'

const embedder = createWordVectorEmbedder()
const nicknames = await loadNicknames()
const relatives = await loadWordRelatives()
const idsOf = (hits: ScoredHit[]) => hits.map((hit) => hit.id)
const phrase = (text: string): TextQuery => ({ words: [], phrases: [tokenize(text)] })

for (const kind of searchIndexKinds) {
  const describeKind = kind.skipReason === null ? describe : describe.skip
  describeKind(`search [${kind.name}]${kind.skipReason === null ? '' : ` skipped: ${kind.skipReason}`}`, () => {
    let store: RegistryStore
    let index: SearchIndex
    let indexer: Indexer
    let dispose: () => Promise<void>
    let get: ReturnType<typeof testRegistry>['get']
    const ids = async (q: string) => {
      const document = await readDocument(await get(`/v1/search?q=${encodeURIComponent(q)}`), searchDocumentSchema)
      return document.data.map((entity) => entity.id)
    }

    beforeAll(async () => {
      store = createMemoryStore()
      await importDemo(store.warehouse)
      ;({ index, dispose } = await kind.open(embedder.dimensions))
      indexer = createIndexer({ store, index, embedder })
      expect(await indexer.catchUp()).toBe(DEMO_RECORDS.length)
      get = testRegistry(store, { search: createSearch(store, { index, embedder, lag: () => indexer.lag(), nicknames }) }).get
    })
    afterAll(async () => {
      await dispose()
    })

    it('ranks the health care act among the first three for "health care"', async () => {
      expect((await ids('health care')).slice(0, 3)).toContain('hr3590111')
    })

    it('answers qualifiers alone with the matching entities in id order', async () => {
      const bills = DEMO_RECORDS.filter((record) => record.type === 'legislation').map((record) => record.id).sort()
      expect(await ids('type:legislation')).toEqual(bills)
    })

    it('never returns an entity whose indexed text holds an excluded word, stems included', async () => {
      const found = await ids('act -tax')
      expect(found.length).toBeGreaterThan(0)
      for (const id of found) {
        const entity = await store.getEntity(id)
        expect(tokenize(`${entity!.snapshot.title ?? ''} ${entity!.snapshot.name ?? ''}`)).not.toContain('tax')
      }
      expect(await ids('relief -taxes')).not.toContain('hr3630112')
    })

    it('prefilters by the qualifiers with the semantics of list filters', async () => {
      const found = await ids('senator type:person jurisdiction:US-WA')
      expect(found.length).toBeGreaterThan(0)
      for (const id of found) expect((await store.getEntity(id))!.snapshot).toMatchObject({ type: 'person', jurisdiction: 'US-WA' })
      const notWa = await ids('senator type:person -jurisdiction:US-WA')
      expect(notWa.length).toBeGreaterThan(0)
      expect(notWa.filter((id) => found.includes(id))).toEqual([])
      const contains = await ids('committee title:~agri')
      expect(contains.sort()).toEqual(['cmtehsag', 'cmtessaf'])
    })

    it('finds names as people type them first: nicknames, typos, prefixes', async () => {
      expect((await ids('Joe Biden'))[0]).toBe('b000444')
      expect((await ids('Bernie Sanders'))[0]).toBe('s000033')
      expect((await ids('Abraham Lincon'))[0]).toBe('l000313')
      expect((await ids('Gillibrnd'))[0]).toBe('g000555')
      expect((await ids('Klobu'))[0]).toBe('k000367')
      // Five of six trigrams shared with Fetterman, none with `veterans` (two edits away too): every index scores them alike.
      expect((await ids('Feterman'))[0]).toBe('f000479')
      // A typo the stemmer makes worse: `klobucher` stems to `klobuch`, two edits from `klobuchar`; as typed it is one.
      expect(await ids('Klobucher')).toEqual(['k000367'])
      // Two letters swapped: one slip, two edits to Levenshtein (seven letters allow one).
      expect((await ids('Jonhson')).slice(0, 7).sort()).toEqual(['j000116', 'j000160', 'j000170', 'j000293', 'j000299', 'j000301', 'j000310'])
      // A name whose stem is not the typed word's (`down`, `blumenth`, `grave`): found among the names as typed.
      expect((await ids('Downng'))[0]).toBe('d000634')
      expect((await ids('Blxmenthal'))[0]).toBe('b001277')
      expect((await ids('Graes'))[0]).toBe('g000546')
      // An identifier typed as it is written.
      expect((await ids('K000367'))[0]).toBe('k000367')
    })

    it('ranks by any of the words, the more matched the higher, and says little or nothing when nothing matches', async () => {
      const found = await ids('senate agriculture forestry')
      expect(found[0]).toBe('cmtessaf')
      // The House's committee matches one of the words: ranked, not filtered out.
      expect(found).toContain('cmtehsag')
      // Where more entities hold every word than are asked for, those come (LanceDB asks for them alone).
      const houseCommittees = await index.fullText(textQueryOf(parseGffs('house committee', { allowFreeText: true }).text, nicknames), [], 5)
      expect(houseCommittees.map((hit) => hit.matched)).toEqual([2, 2, 2, 2, 2])
      expect(await ids('Napoleon Bonaparte')).toEqual([])
      expect((await ids('Winston Churchill')).length).toBeLessThanOrEqual(3)
      // A name matched whole comes before the semantic side's neighbours (all Presidents embed alike).
      expect((await ids('Roosevelt')).slice(0, 2).sort()).toEqual(['gt412364', 'r000429'])
    })

    it('answers words of letters beyond 16 bits (their typos looked for too, their letters swapped whole)', async () => {
      expect(await ids('𐌰𐌱𐌲𐌳')).toEqual([])
      expect((await ids('𐌰𐌱𐌲𐌳 Jonhson')).slice(0, 7).sort()).toEqual(['j000116', 'j000160', 'j000170', 'j000293', 'j000299', 'j000301', 'j000310'])
    })

    it('answers a word longer than anyone types (no typo allowance for it)', async () => {
      const long = 'x'.repeat(300)
      expect(await ids(long)).toEqual([])
      expect(await ids(`senate ${long}`)).toContain('cmtessaf')
    })

    it('matches a phrase only where its words stand in a row', async () => {
      expect((await ids('"ways and means"'))[0]).toBe('cmtehswm')
      expect(idsOf(await index.fullText(phrase('ways and means'), [], 10))).toEqual(['cmtehswm'])
      expect(await index.fullText(phrase('means and ways'), [], 10)).toEqual([])
    })

    it.runIf(kind.semantic)('finds entities from queries that share no word with them (the held-back set)', async () => {
      const heldBack = RELEVANCE_SET.filter((query) => query.heldBack)
      const quality = await measure(heldBack, ids)
      // Words alone find none of these: every hit comes from the semantic side.
      expect(quality.top5).toBeGreaterThanOrEqual(Math.ceil(heldBack.length / 2))
    })

    it('finds by their WordNet relatives the entities whose own fields hold none of the typed words, and expands no name', async () => {
      // Full text alone (no vectors), with and without the relatives.
      const byFullText = (withRelatives: boolean) => {
        const search = createSearch(store, { index, embedder: createNoEmbedder(), nicknames, ...(withRelatives ? { relatives } : {}) })
        return async (q: string) => (await search.search(parseGffs(q, { allowFreeText: true }))).map((entity) => entity.id)
      }
      const [without, withRelatives] = [byFullText(false), byFullText(true)]
      expect(await without('spies')).toEqual([])
      expect((await withRelatives('spies')).slice(0, 2).sort()).toEqual(['cmtehlig', 'cmteslin'])
      expect((await withRelatives('military')).slice(0, 2).sort()).toEqual(['cmtehsas', 'cmtessas'])
      // A word the data holds is not expanded; nor is a name WordNet holds only as a name.
      expect(await withRelatives('senate finance')).toEqual(await without('senate finance'))
      expect(await withRelatives('Eiffel Tower')).toEqual([])
    })

    it('ranks the people of a place a query names first, those of the role asked for before the rest, without filtering', async () => {
      const rank = (places: boolean) => {
        const search = createSearch(store, { index, embedder: createNoEmbedder(), nicknames, places })
        return async (q: string) => (await search.search(parseGffs(q, { allowFreeText: true }))).map((entity) => entity.id)
      }
      const [without, withPlaces] = [rank(false), rank(true)]
      // Ohio's senators: a nickname the data does not hold.
      expect((await without('Buckeye State senators')).slice(0, 2).sort()).not.toEqual(['h001104', 'm001242'])
      expect((await withPlaces('Buckeye State senators')).slice(0, 2).sort()).toEqual(['h001104', 'm001242'])
      // A postal code beside a role; a role word the data does not hold; a district by its ordinal.
      expect((await withPlaces('senator from WV')).slice(0, 2).sort()).toEqual(['c001047', 'j000312'])
      expect((await withPlaces("Alaska's congressman"))[0]).toBe('b001323')
      expect((await withPlaces("Ohio's 4th congressional district"))[0]).toBe('j000289')
      // A boost, not a filter: what the typed words find is still there, and a name typed whole comes first.
      expect(await withPlaces('Buckeye State senators')).toEqual(expect.arrayContaining(await without('Buckeye State senators')))
      expect((await withPlaces('George Washington'))[0]).toBe('w000178')
      // The query's own qualifiers still hold.
      expect(await withPlaces('Texas congressmen type:committee')).toEqual([])
    })

    it('meets the relevance goals of each kind of query on the relevance set', { timeout: 120_000 }, async () => {
      // Without the texts indexed (test/texts/passages.test.ts has them): their queries are left out.
      const quality = await measureByKind(RELEVANCE_SET.filter((query) => query.kind !== 'texts'), ids)
      // Without vectors, paraphrases find little: the goal of every kind together is the hybrid's.
      if (kind.semantic) expect(quality.all.ndcg10).toBeGreaterThanOrEqual(0.85)
      expect(quality.exact.ndcg10).toBeGreaterThanOrEqual(0.95)
      expect(quality.names.ndcg10).toBeGreaterThanOrEqual(0.9)
      expect(quality.none.results).toBeLessThanOrEqual(10)
    })

    it.runIf(kind.semantic)('ranks better fused than by full text alone', async () => {
      const search = createSearch(store, { index, embedder, nicknames })
      const bm25 = async (q: string) => {
        const { text, qualifiers } = parseGffs(q, { allowFreeText: true })
        return idsOf(await index.fullText(textQueryOf(text, new Map()), qualifiers, 100))
      }
      const hybrid = await measure(RELEVANCE_SET, async (q) => (await search.search(parseGffs(q, { allowFreeText: true }))).map((entity) => entity.id))
      const textOnly = await measure(RELEVANCE_SET, bm25)
      expect(hybrid.mrr!).toBeGreaterThan(textOnly.mrr!)
      expect(hybrid.ndcg10!).toBeGreaterThan(textOnly.ndcg10!)
    })

    it('reads a page of results from the store in one read, and gives the same page from a store that reads one id at a time', async () => {
      const reads = { one: 0, many: 0 }
      const counted: typeof store = {
        ...store,
        getEntity: (id) => (reads.one++, store.getEntity(id)),
        getEntities: (ids) => (reads.many++, store.getEntities!(ids)),
      }
      const { getEntities: _unused, ...oneAtATime } = store
      const query = parseGffs('committee -house', { allowFreeText: true })
      const batched = await createSearch(counted, { index, embedder, nicknames }).search(query)
      expect(batched.length).toBeGreaterThan(10)
      expect(reads).toEqual({ one: 0, many: 1 })
      expect(await createSearch(oneAtATime, { index, embedder, nicknames }).search(query)).toEqual(batched)
    })

    it('ranks a query that names a person by full text alone, asking for the nearest vectors only where they may count', async () => {
      const asked = { nearest: 0 }
      const counted: SearchIndex = Object.create(index, {
        nearest: { value: (...args: Parameters<SearchIndex['nearest']>) => (asked.nearest++, index.nearest(...args)) },
      })
      const search = createSearch(store, { index: counted, embedder, nicknames })
      // Without vectors there is nothing to leave out: the best hit is not read to find out.
      const textOnly = createSearch({ ...store, getEntity: () => Promise.reject(new Error('read without vectors')) }, { index, embedder: createNoEmbedder(), nicknames })
      // The semantic side finds two bills for these words; the person alone is asked for, typo and all.
      for (const q of ['Jake Auchincloss', 'Jake Auchinclos']) {
        asked.nearest = 0
        const query = parseGffs(q, { allowFreeText: true })
        const found = (await search.search(query)).map((entity) => entity.id)
        expect(found[0]).toBe('a000148')
        expect(found).not.toContain('hres9112')
        expect(found).toEqual((await textOnly.search(query)).map((entity) => entity.id))
        // An index ranking in this process is not asked; another is asked at once, its answer left out.
        expect(asked.nearest).toBe(index.ranksInProcess === true ? 0 : 1)
      }
      // A word that no name of the person holds, or one word alone (a surname may be a word too, `banks`): the nearest count.
      for (const q of ['representative Auchincloss', 'Auchincloss']) {
        asked.nearest = 0
        await search.search(parseGffs(q, { allowFreeText: true }))
        expect(asked.nearest).toBe(1)
      }
    })

    it('follows the feed: a renamed bill is found by its new name, deleted and merged entities are gone', async () => {
      const bill = DEMO_RECORDS.find((record) => record.id === 'hr547113')!
      await store.warehouse.upsert({ ...bill, title: 'Quokka Habitat Preservation Act' })
      await store.warehouse.upsert({ id: 'zz1', type: 'person', name: 'Wombat Example' })
      await store.warehouse.upsert({ id: 'zz2', type: 'person', name: 'Wombat Other' })
      await indexer.catchUp()
      expect((await ids('quokka habitat'))[0]).toBe('hr547113')
      expect(idsOf(await index.fullText(textQueryOf(parseGffs('quokka', { allowFreeText: true }).text, new Map()), [], 10))).toEqual(['hr547113'])
      await store.warehouse.merge('zz2', 'zz1')
      await store.warehouse.delete('hr547113')
      await indexer.catchUp()
      expect(await ids('quokka')).not.toContain('hr547113')
      expect(await index.fullText(textQueryOf(parseGffs('quokka', { allowFreeText: true }).text, new Map()), [], 10)).toEqual([])
      const wombats = await ids('wombat')
      expect(wombats[0]).toBe('zz1')
      expect(wombats).not.toContain('zz2')
    })

    it('answers from the index as it stands while it lags, says how far behind, and never returns what was deleted or merged away since', async () => {
      await store.warehouse.upsert({ id: 'zz3', type: 'person', name: 'Numbat Example' })
      await store.warehouse.upsert({ id: 'zz4', type: 'person', name: 'Numbat Other' })
      await store.warehouse.upsert({ id: 'zz5', type: 'person', name: 'Numbat Third' })
      await indexer.catchUp()
      await store.warehouse.delete('zz3')
      await store.warehouse.merge('zz4', 'zz5')
      await store.warehouse.upsert({ id: 'zz6', type: 'person', name: 'Numbat Newcomer' })
      // Three changes not applied: the index still holds zz3 and zz4 and lacks zz6.
      const behind = await get('/v1/search?q=numbat')
      expect(behind.headers.get('search-index-lag')).toBe('3')
      expect((await readDocument(behind, searchDocumentSchema)).data.map((entity) => entity.id)).toEqual(['zz5'])
      await indexer.catchUp()
      const current = await get('/v1/search?q=numbat')
      expect(current.headers.get('search-index-lag')).toBe('0')
      expect((await readDocument(current, searchDocumentSchema)).data.map((entity) => entity.id).sort()).toEqual(['zz5', 'zz6'])
    })

    it('answers a full page when the index still holds entities gone from the store, reading on only for those', async () => {
      await store.warehouse.apply(Array.from({ length: 140 }, (_, n) => ({ op: 'upsert' as const, record: { id: `bilby${String(n).padStart(3, '0')}`, type: 'person', name: `Bilby ${n}` } })))
      await indexer.catchUp()
      // An excluded word asks the index for 150 candidates (50 more for each).
      const query = parseGffs('bilby -quokka', { allowFreeText: true })
      const before = (await createSearch(store, { index, embedder, nicknames }).search(query)).map((entity) => entity.id)
      expect(before).toHaveLength(100)
      // Thirty of the first hundred deleted, and the index not told yet.
      const deleted = before.filter((_, position) => position % 3 === 0).slice(0, 30)
      for (const id of deleted) await store.warehouse.delete(id)
      let reads = 0
      const counted: typeof store = { ...store, getEntities: (ids) => (reads++, store.getEntities!(ids)) }
      const found = (await createSearch(counted, { index, embedder, nicknames }).search(query)).map((entity) => entity.id)
      expect(found).toHaveLength(100)
      expect(found.filter((id) => deleted.includes(id))).toEqual([])
      expect(found.slice(0, 70)).toEqual(before.filter((id) => !deleted.includes(id)))
      expect(reads).toBe(2)
      const { getEntities: _unused, ...oneAtATime } = store
      expect((await createSearch(oneAtATime, { index, embedder, nicknames }).search(query)).map((entity) => entity.id)).toEqual(found)
      await indexer.catchUp()
    })
  })
}

describe('search indexes agree', () => {
  // Ties (titles of the same length) may come in any order: what must agree is what matches.
  // PGlite starts in 2 to 30 s, by how busy the machine is.
  it('finds the same entities for words, phrases and qualifiers on every index', { timeout: 120_000 }, async () => {
    const store = createMemoryStore()
    await importDemo(store.warehouse)
    // One after the other: PGlite's start holds the event loop for seconds, past the bound within
    // which the PostgreSQL kind's reads must be answered (3 s) if it were opening at the same time.
    const opened: Awaited<ReturnType<(typeof searchIndexKinds)[number]['open']>>[] = []
    for (const kind of searchIndexKinds.filter((each) => each.skipReason === null)) opened.push(await kind.open(embedder.dimensions))
    for (const { index } of opened) await createIndexer({ store, index, embedder }).catchUp()
    const queries = ['house committee', 'committee committee house', 'committee "ways and means"', 'senate "ways and means"', 'act tax relief', 'committee type:committee title:~agri', 'senator -jurisdiction:US-WA']
    for (const q of queries) {
      const query = parseGffs(q, { allowFreeText: true })
      const text = textQueryOf(query.text, new Map())
      const [reference, ...others] = await Promise.all(opened.map(async ({ index }) => idsOf(await index.fullText(text, query.qualifiers, 1000))))
      expect(reference!.length, q).toBeLessThan(1000) // all that match, so that no tie is cut off
      for (const found of others) expect(found.toSorted(), q).toEqual(reference!.toSorted())
    }
    for (const { dispose } of opened) await dispose()
  })
})

describe('a LanceDB index written by an earlier version', () => {
  it('is emptied when opened, and its indexer rebuilds it from the feed with the name columns', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'er-lancedb-old-'))
    const lancedb = await import('@lancedb/lancedb')
    const db = await lancedb.connect(directory)
    // The columns of the version before name words: no names, no name_trigrams.
    await db.createTable('entities', [{ id: 'k000367', type: 'person', tokens: 'amy klobuchar', vector: Array.from({ length: embedder.dimensions }, () => 0.1) }])
    await db.createTable('state', [{ key: 'cursor', value: 'echg_old' }, { key: 'embedder', value: embedder.id }])
    db.close()
    const store = createMemoryStore()
    await importDemo(store.warehouse)
    const index = await createLancedbSearchIndex({ uri: directory, dimensions: embedder.dimensions })
    expect(await index.state()).toEqual({ cursor: null, embedderId: null })
    await createIndexer({ store, index, embedder }).catchUp()
    const search = createSearch(store, { index, embedder, nicknames })
    expect((await search.search(parseGffs('Klobu', { allowFreeText: true }))).map((entity) => entity.id)).toEqual(['k000367'])
    await index.close()
    await rm(directory, { recursive: true, force: true })
  })
})

describe('entities created since the index\'s state', () => {
  it('are marked by the indexer: created in the step, not before it', async () => {
    const store = createMemoryStore()
    const applied: IndexedEntity[][] = []
    const memory = createMemorySearchIndex()
    const index: SearchIndex = { ...memory, apply: (change) => (applied.push(change.upserts), memory.apply(change)) }
    const indexer = createIndexer({ store, index, embedder })
    await store.warehouse.upsert({ id: 'zz1', type: 'person', name: 'Earlier Person' })
    await indexer.catchUp()
    await store.warehouse.upsert({ id: 'zz1', type: 'person', name: 'Earlier Person Renamed' })
    await store.warehouse.upsert({ id: 'zz2', type: 'person', name: 'Newer Person' })
    await store.warehouse.upsert({ id: 'zz2', type: 'person', name: 'Newer Person Renamed' })
    await indexer.catchUp()
    expect(applied.map((upserts) => upserts.map(({ id, created }) => ({ id, created })))).toEqual([
      [{ id: 'zz1', created: true }],
      [
        { id: 'zz1', created: undefined },
        { id: 'zz2', created: true },
      ],
    ])
  })

  it('are not duplicated in LanceDB when a step is applied again after the index is reopened (a crash mid-step)', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'er-lancedb-replay-'))
    const vector = (await embedder.embed(['person']))[0]!
    const step = {
      upserts: [{ id: 'zz1', fields: { type: 'person' }, tokens: ['quokka'], names: ['quokka'], vector, created: true }],
      removals: [],
      state: { cursor: null, embedderId: vectorsIdOf(embedder) },
    }
    const opened = await createLancedbSearchIndex({ uri: directory, dimensions: embedder.dimensions })
    await opened.apply(step)
    await opened.close()
    // The cursor was not recorded past the step: the indexer applies it again, into rows it added.
    const reopened = await createLancedbSearchIndex({ uri: directory, dimensions: embedder.dimensions })
    await reopened.apply(step)
    expect(idsOf(await reopened.nearest(vector, [], 10))).toEqual(['zz1'])
    // Settled since: a created entity is added without a delete, and an update still replaces it.
    await reopened.apply({ ...step, upserts: [{ ...step.upserts[0]!, id: 'zz2' }] })
    await reopened.apply({ ...step, upserts: [{ ...step.upserts[0]!, tokens: ['numbat'], created: undefined }] })
    expect(idsOf(await reopened.nearest(vector, [], 10)).sort()).toEqual(['zz1', 'zz2'])
    expect(idsOf(await reopened.fullText({ words: [queryWord('quokka')], phrases: [] }, [], 10))).toEqual(['zz2'])
    await reopened.close()
    await rm(directory, { recursive: true, force: true })
  })
})

describe('the indexer\'s background loop', () => {
  it('runs once when started again before its stop has finished (a lease lost and taken back at once), and not at all once stopped', async () => {
    const store = createMemoryStore()
    let steps = 0
    const memory = createMemorySearchIndex()
    const index: SearchIndex = { ...memory, state: () => (steps++, memory.state()) }
    const indexer = createIndexer({ store, index, embedder })
    const intervalMs = 20
    indexer.start(intervalMs)
    void indexer.stop()
    indexer.start(intervalMs)
    indexer.start(intervalMs)
    const since = steps
    await new Promise((resolve) => setTimeout(resolve, intervalMs * 10))
    // One loop steps about once an interval (11 in 10 intervals); three would step three times as often.
    expect(steps - since).toBeLessThanOrEqual(15)
    await indexer.stop()
    const stoppedAt = steps
    await new Promise((resolve) => setTimeout(resolve, intervalMs * 5))
    expect(steps).toBe(stoppedAt)
  })
})

describe('the typed words', () => {
  it('leave out a possessive\'s s, which would match every initial S., and keep an apostrophe inside a name', () => {
    expect(queryWords("Georgia's 14th district").map((word) => word.name)).toEqual(['georgia', '14th', 'district'])
    expect(queryWords('Wyoming’s congresswoman').map((word) => word.token)).toEqual(['wyom', 'congresswoman'])
    expect(queryWords("O'Sullivan's bills").map((word) => word.name)).toEqual(['o', 'sullivan', 'bills'])
    expect(queryWords('S. 1 and s 2').map((word) => word.name)).toEqual(['s', '1', 'and', 's', '2'])
  })

  it("match a given name's other forms whole, and the name as typed by its parts too", () => {
    const [bill] = textQueryOf(parseGffs('Bill Smith', { allowFreeText: true }).text, nicknames).words
    expect(bill!.names).toEqual(expect.arrayContaining(['bill', 'william', 'willis']))
    expect(bill!.nameParts).toEqual(['bill'])
    const namesOf = (...names: string[]) => [names, new Set(trigramsOf(names.join(' ')))] as const
    expect(matchesWord(bill!, [], ...namesOf('william', 'clinton'))).toBe(true)
    // `william`, a form of Bill, is no part of Roger Williams's name: a name word that holds its trigrams is not Bill.
    expect(matchesWord(bill!, [], ...namesOf('roger', 'williams'))).toBe(false)
    expect(matchesWord(bill!, [], ...namesOf('billie', 'holiday'))).toBe(true)
    const [klobu] = textQueryOf(parseGffs('Klobu', { allowFreeText: true }).text, nicknames).words
    expect(klobu!.nameParts).toEqual(['klobu'])
    expect(queryWord('ed', ['ed', 'edward']).nameParts).toEqual([])
  })

  it('look for typos as typed: among the names as written, and two adjacent letters swapped', () => {
    const [klobucher, jonhson, nations] = textQueryOf(parseGffs('Klobucher Jonhson nations', { allowFreeText: true }).text, nicknames).words
    // The stem, `klobuch`, is two edits from `klobuchar`; as typed, the word is one from the name.
    expect(klobucher).toEqual({ token: 'klobuch', near: [{ form: 'klobuch', allowance: 1 }], nearNames: [{ form: 'klobucher', allowance: 2 }], names: ['klobucher'], nameParts: ['klobucher'] })
    expect(matchesWord(klobucher!, ['ami', 'klobuchar'], ['amy', 'klobuchar'], new Set())).toBe(true)
    expect(matchesWord(klobucher!, ['klobuchar'], [], new Set())).toBe(false)
    // Seven letters allow one edit, and Levenshtein counts a swap as two.
    expect(jonhson!.near).toContainEqual({ form: 'johnson', allowance: 0 })
    expect(matchesWord(jonhson!, ['johnson'], [], new Set())).toBe(true)
    expect(matchesWord(jonhson!, ['johnsen'], [], new Set())).toBe(false)
    expect(nations!.near.filter((form) => form.allowance > 0)).toEqual([{ form: 'nation', allowance: 1 }])
    // Among the names, as typed: `downng` is one edit from Downing, whose stem is `down`.
    const [downng] = textQueryOf(parseGffs('Downng', { allowFreeText: true }).text, nicknames).words
    expect(downng!.nearNames).toEqual([{ form: 'downng', allowance: 1 }])
    expect(matchesWord(downng!, ['troi', 'down'], ['troy', 'downing'], new Set())).toBe(true)
    expect(matchesWord(downng!, ['troi', 'down'], ['troy', 'downey'], new Set())).toBe(false)
    // A word search derives (a relative, a place's title) has its token's allowance alone.
    expect(queryWord('klobuch')).toEqual({ token: 'klobuch', near: [{ form: 'klobuch', allowance: 1 }], nearNames: [], names: [], nameParts: [] })
    expect(queryWord('farm').near).toEqual([])
    // Letters beyond 16 bits are swapped whole, never their surrogate halves.
    const [gothic] = textQueryOf(parseGffs('𐌰𐌱𐌲', { allowFreeText: true }).text, nicknames).words
    expect(gothic!.near.filter((form) => form.allowance === 0).map((form) => form.form)).toEqual(['𐌱𐌰𐌲', '𐌰𐌲𐌱'])
  })
})

describe('the fusion of full text and meaning', () => {
  it('puts a bill whose text alone holds every typed word first, unless an entity\'s own fields hold them all', () => {
    const bill = { id: 'bill', score: 9, matched: 2, inTextsOnly: true }
    const partial = { id: 'partial', score: 5, matched: 1 }
    const neighbour = { id: 'neighbour', score: 0.5 }
    expect(fuse([bill, partial], [neighbour], 2)[0]).toBe('bill')
    const named = { id: 'named', score: 8, matched: 2 }
    expect(fuse([bill, named, partial], [neighbour], 2)).toEqual(['named', 'neighbour', 'partial', 'bill'])
    // Its fields held one word, its text both: it does not name what the query asks for.
    const both = { id: 'both', score: 8, matched: 2, matchedInFields: 1 }
    expect(fuse([bill, both, partial], [neighbour], 2)[1]).toBe('bill')
    // One word found in a long text only is weak: it never comes first, and of two typed words it does not count.
    expect(fuse([{ ...bill, matched: 1 }, partial], [], 1)).toEqual(['partial', 'bill'])
    expect(fuse([{ ...bill, matched: 1 }, partial], [neighbour], 2)).toEqual(['neighbour', 'partial'])
  })

  it('puts the people of a place the query names before a text that holds every typed word', () => {
    // `TX senator`: a bill's list of cosponsors holds both words; Texas's senators hold `senator` alone.
    const bill = { id: 'bill', score: 9, matched: 2, inTextsOnly: true }
    const senator = { id: 'tx-senator', score: 3, matched: 1 }
    const otherSenator = { id: 'oh-senator', score: 3, matched: 1 }
    expect(fuse([bill, otherSenator, senator], [], 2)[0]).toBe('bill')
    expect(fuse([bill, otherSenator, senator], [], 2, [], [{ id: 'tx-senator', score: 1 }])).toEqual(['tx-senator', 'oh-senator', 'bill'])
  })

  it('weighs a partial match by its BM25 score too, so that the rarer matched word counts for more', () => {
    // `senate judiciary committee`: the House's Judiciary committee holds the rare word, the
    // Senate's Finance committee the common one, and the semantic side puts Finance nearer.
    const senateJudiciary = { id: 'senate-judiciary', score: 53, matched: 3 }
    const houseJudiciary = { id: 'house-judiciary', score: 41, matched: 2 }
    const senateFinance = { id: 'senate-finance', score: 27, matched: 2 }
    const near = ['senate-judiciary', 'senate-finance', 'senate-budget', 'senate-rules', 'house-judiciary'].map((id, rank) => ({ id, score: 0.9 - rank / 100 }))
    const fused = fuse([senateJudiciary, houseJudiciary, senateFinance], near, 3)
    expect(fused.slice(0, 3)).toEqual(['senate-judiciary', 'house-judiciary', 'senate-finance'])
  })

  it('weighs a match in texts only for less where an entity\'s own fields hold every typed word', () => {
    const committee = { id: 'committee', score: 30, matched: 3 }
    const law = { id: 'law', score: 12, matched: 3, inTextsOnly: true }
    const otherChamber = { id: 'other-chamber', score: 10, matched: 1 }
    // The law is the second nearest, the other chamber's committee the twentieth.
    const others = Array.from({ length: 18 }, (_, position) => `other-${position}`)
    const near = ['committee', 'law', ...others, 'other-chamber'].map((id, rank) => ({ id, score: 0.9 - rank / 100 }))
    const fused = fuse([committee, law, otherChamber], near, 3)
    expect(fused.filter((id) => !id.startsWith('other-') || id === 'other-chamber')).toEqual(['committee', 'other-chamber', 'law'])
  })
})

describe('an index of an earlier recipe of the embedded text', () => {
  it('is rebuilt from the feed by its indexer, and one of another embedder is still refused', async () => {
    const store = createMemoryStore()
    await importDemo(store.warehouse)
    const index = createMemorySearchIndex()
    const stale = { words: [queryWord('zzstale', ['zzstale'])], phrases: [] }
    // What a version before recorded recipes wrote: the embedder's id alone, the feed applied to its head.
    const vector = new Float32Array(embedder.dimensions).fill(0.1)
    await index.apply({ upserts: [{ id: 'stale', fields: { title: 'zzstale' }, tokens: ['zzstale'], names: [], vector }], removals: [], state: { cursor: await store.feedHead(), embedderId: embedder.id } })
    expect(otherEmbedderOf(await index.state(), embedder)).toBeNull()
    expect(idsOf(await index.fullText(stale, [], 10))).toEqual(['stale'])
    const indexer = createIndexer({ store, index, embedder })
    expect(await indexer.catchUp()).toBe(DEMO_RECORDS.length)
    expect(idsOf(await index.fullText(stale, [], 10))).toEqual([])
    expect(await index.state()).toEqual({ cursor: await store.feedHead(), embedderId: vectorsIdOf(embedder) })
    expect(await indexer.catchUp()).toBe(0)
    const other: Embedder = { ...embedder, id: 'another-embedder@1' }
    expect(otherEmbedderOf(await index.state(), other)).toBe(embedder.id)
    await expect(createIndexer({ store, index, embedder: other }).catchUp()).rejects.toThrow(`built with the embedder ${embedder.id}, not another-embedder@1`)
  })
})

describe('the relevance set', () => {
  it('holds graded queries of every kind about entities of the demo data, and its held-back queries share no token with their targets', () => {
    const demo = new Map(DEMO_RECORDS.map((record) => [record.id, record]))
    expect(RELEVANCE_SET.length).toBeGreaterThanOrEqual(80)
    for (const kind of KINDS) expect(RELEVANCE_SET.filter((query) => query.kind === kind).length, kind).toBeGreaterThanOrEqual(10)
    for (const query of RELEVANCE_SET) {
      expect(Object.keys(query.relevant).length === 0, query.q).toBe(query.kind === 'none')
      for (const [id, grade] of Object.entries(query.relevant)) expect([demo.has(id), grade], `${query.q}: ${id}`).toEqual([true, expect.toBeOneOf([1, 2])])
      if (!query.heldBack) continue
      const asked = tokenize(query.q)
      for (const id of Object.keys(query.relevant)) {
        const record = demo.get(id)!
        const indexed = tokenize([record.title, record.name, record.localIdentifier].filter(Boolean).join(' '))
        expect(asked.filter((token) => indexed.includes(token)), `${query.q}: ${id}`).toEqual([])
      }
    }
  })
})

describe('the third relevance set (a development set of paraphrases)', () => {
  it('holds at least 60 graded paraphrases about entities of the demo data, every one in the development part', () => {
    const demo = new Map(DEMO_RECORDS.map((record) => [record.id, record]))
    const set = readRelevanceSet(new URL('./relevance-set-3.json', import.meta.url))
    expect(set.length).toBeGreaterThanOrEqual(60)
    expect(new Set(set.map((query) => query.q)).size).toBe(set.length)
    for (const query of set) {
      expect([query.kind, query.part, query.target], query.q).toEqual(['paraphrase', 'dev', expect.toBeOneOf(['person', 'committee', 'bill'])])
      expect(Object.values(query.relevant), query.q).toContain(2)
      for (const [id, grade] of Object.entries(query.relevant)) expect([demo.has(id), grade], `${query.q}: ${id}`).toEqual([true, expect.toBeOneOf([1, 2])])
    }
  })
})

describe('the relevance protocol', () => {
  it('splits the set into a development and a held-out part, by the hash of the query text within each kind', () => {
    const sha = (text: string) => createHash('sha256').update(text).digest('hex')
    for (const kind of KINDS) {
      const ordered = RELEVANCE_SET.filter((query) => query.kind === kind).sort((a, b) => (sha(a.q) < sha(b.q) ? -1 : 1))
      expect(ordered.map((query) => query.part), kind).toEqual(ordered.map((_, position) => PARTS[position % 2]))
    }
  })

  it('gives seeded bootstrap intervals around the mean, and calls a paired difference within the noise noise', () => {
    const values = Array.from({ length: 40 }, (_, n) => (n % 4) / 3)
    const interval = bootstrapInterval(values)!
    expect(bootstrapInterval(values)).toEqual(interval)
    expect(interval[0]).toBeLessThan(0.5)
    expect(interval[1]).toBeGreaterThan(0.5)
    expect(bootstrapInterval([0.5, 0.5, 0.5])).toEqual([0.5, 0.5])
    expect(pairedDifference(values, values.map((value, n) => value + (n % 2 === 0 ? 0.01 : -0.01))).verdict).toBe('noise')
    expect(pairedDifference(values, values.map((value) => value + 0.1)).verdict).toBe('up')
    expect(pairedDifference(values, values.map((value, n) => (n < 20 ? value - 0.5 : value))).verdict).toBe('down')
  })
})

describe('search errors', () => {
  const store = createMemoryStore()
  const failing = (what: string): Embedder => ({ id: 'failing', dimensions: 3, embed: async () => Promise.reject(new Error(`${what} is down`)) })

  it('answers 400 naming q for a missing or invalid query', async () => {
    const { get } = testRegistry(store, { search: createSearch(store, { index: (await searchIndexKinds[0]!.open(3)).index, embedder: failing('x') }) })
    await expectError(await get('/v1/search'), 400, 'invalid_filter', 'q')
    await expectError(await get('/v1/search?q=party:x'), 400, 'unsupported_field', 'q')
    await expectError(await get('/v1/search?q=attributes.title:x'), 400, 'nested_field_path', 'q')
    await expectError(await get('/v1/search?q=%22unclosed'), 400, 'invalid_filter', 'q')
  })

  it('answers 500 search_failed when the embedder or the index fails, and reports the cause', async () => {
    const reported: unknown[] = []
    const index = (await searchIndexKinds[0]!.open(3)).index
    const { get } = testRegistry(store, { search: createSearch(store, { index, embedder: failing('the embedder') }), onError: (error) => reported.push(error) })
    const error = await expectError(await get('/v1/search?q=health'), 500, 'search_failed')
    expect(error.detail).not.toContain('down')
    expect(String(reported[0])).toContain('the embedder is down')
    const brokenIndex: SearchIndex = { ...index, fullText: () => Promise.reject(new Error('the index is down')) }
    const second = testRegistry(store, { search: createSearch(store, { index: brokenIndex, embedder: createWordVectorEmbedder() }) })
    await expectError(await second.get('/v1/search?q=health'), 500, 'search_failed')
  })

  it('counts a backlog against searching only until the index first reaches the feed head', async () => {
    const fresh = createMemoryStore()
    await importDemo(fresh.warehouse)
    const indexer = createIndexer({ store: fresh, index: createMemorySearchIndex(), embedder })
    expect(await indexer.buildLag()).toBe(DEMO_RECORDS.length)
    await indexer.catchUp()
    const [first] = DEMO_RECORDS
    for (let round = 0; round < 3; round++) await fresh.warehouse.upsert({ ...first!, title: `changed ${round}` })
    // Live writes not yet applied: the index is behind, but it is usable.
    expect(await indexer.lag()).toBe(3)
    expect(await indexer.buildLag()).toBe(0)
    expect(await indexer.lagSeconds()).toBeGreaterThanOrEqual(0)
    await indexer.catchUp()
    expect(await indexer.lagSeconds()).toBe(0)
    await indexer.rebuild()
    expect(await indexer.buildLag()).toBe(0)
  })

  it('answers 404 search_disabled without search, and 500 search_failed when the index could not be opened', async () => {
    const disabled = await testRegistry(store).get('/v1/search?q=health')
    expect(disabled.headers.get('content-type')).toBe('application/vnd.api+json')
    await expectError(disabled, 404, 'search_disabled')
    // Switched off, the resource is not there: whatever the query, no 400 about it.
    await expectError(await testRegistry(store).get('/v1/search'), 404, 'search_disabled')
    await expectError(await testRegistry(store, { search: Promise.resolve(undefined) }).get('/v1/search?q=health'), 500, 'search_failed')
  })
})

describe('the state an index keeps', () => {
  for (const kind of searchIndexKinds.filter((each) => each.skipReason === null)) {
    it(`is whole whenever it is read, while the indexer writes it [${kind.name}]`, async () => {
      const { index, dispose } = await kind.open(embedder.dimensions)
      try {
        const write = (cursor: number) => index.apply({ upserts: [], removals: [], state: { cursor: String(cursor), embedderId: 'e' } })
        await write(0)
        let writing = true
        const reads: (string | null)[] = []
        const reading = (async () => {
          while (writing) {
            reads.push((await index.state()).cursor)
            // A state known in memory (the resident index's) is read without I/O: let the writes go on.
            await new Promise((resolve) => setImmediate(resolve))
          }
        })()
        for (let cursor = 1; cursor <= 30; cursor++) await write(cursor)
        writing = false
        await reading
        // A read between deleting the old state and adding the new one would say the whole feed is behind.
        expect(reads.length).toBeGreaterThan(0)
        expect(reads.filter((cursor) => cursor === null)).toEqual([])
      } finally {
        await dispose()
      }
    })
  }
})
