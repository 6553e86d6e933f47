import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Kysely } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createNoEmbedder, createWordVectorEmbedder } from '../../src/embedders/index.js'
import { parseGffs } from '../../src/gffs/parse.js'
import type { Qualifier } from '../../src/gffs/types.js'
import { createLancedbSearchIndex } from '../../src/lancedb/index.js'
import { createMemorySearchIndex } from '../../src/memory/memory-search-index.js'
import { createMemoryStore } from '../../src/memory/memory-store.js'
import type { IndexedEntity, ScoredHit, SearchIndex, TextHit } from '../../src/ports/search-index.js'
import { createPostgresStore } from '../../src/kysely/index.js'
import { createPostgresSearchIndex } from '../../src/postgres-search/index.js'
import { createResidentSearchIndex, type ResidentSearchIndex, type ResidentSearchIndexOptions } from '../../src/resident/index.js'
import { changedEntities, createIndexer } from '../../src/search/indexer.js'
import { createEntityTexts } from '../../src/texts/entity-texts.js'
import type { BlobStore } from '../../src/ports/blob-store.js'
import { textQueryOf } from '../../src/search/search-service.js'
import { queryWord, tokenize } from '../../src/search/text.js'
import { loadNicknames } from '../../src/node/nicknames.js'
import { loadWordRelatives } from '../../src/node/word-relatives.js'
import { relativesOf } from '../../src/search/word-relatives.js'
import { importDemo } from '../support/demo.js'
import { freshPostgresSchema, POSTGRES_URL, storeDialects } from '../stores/each-store.js'
import { within } from '../support/polling.js'
import { withPostgresClient } from '../support/postgres-client.js'
import { pgliteVectorDatabase } from './each-search-index.js'
import { readRelevanceSet, RELEVANCE_SET } from './relevance.mjs'

const postgresDialect = storeDialects.find((dialect) => dialect.name === 'postgres')!

const embedder = createWordVectorEmbedder()
const nicknames = await loadNicknames()
const SECOND_SET = readRelevanceSet(new URL('./relevance-set-2.json', import.meta.url))
/** Every query of both relevance sets; the first set's under prefilters of kept fields too; and some under a title's (a wide field, held while the index is small). */
const QUERIES = [
  ...[...RELEVANCE_SET, ...SECOND_SET].map(({ q }) => q),
  ...RELEVANCE_SET.flatMap(({ q }) => [`${q} type:person`, `${q} -jurisdiction:US displayDate:>1990`]),
  ...RELEVANCE_SET.slice(0, 20).map(({ q }) => `${q} title:~act`),
]

/** A resident index in front of `behind` once it has loaded (as `serve` opens it), and how many entities it loaded. */
async function loadedResident(behind: SearchIndex, options: Partial<ResidentSearchIndexOptions> = {}): Promise<{ index: ResidentSearchIndex; entities: number }> {
  let index: ResidentSearchIndex | undefined
  const { entities } = await new Promise<{ entities: number }>((resolve) => {
    void createResidentSearchIndex({ behind, dimensions: embedder.dimensions, ...options, onLoaded: resolve }).then((made) => (index = made))
  })
  return { index: index!, entities }
}

/** The nearest vectors as exact search finds them, within the Int8 components' precision: 9 of its best 10, each score within 0.01. */
function expectNearestAsExact(found: ScoredHit[], expected: ScoredHit[], label: string) {
  expect(found.length, label).toBe(expected.length)
  const top = new Set(expected.slice(0, 10).map((hit) => hit.id))
  expect(found.slice(0, 10).filter((hit) => top.has(hit.id)).length, label).toBeGreaterThanOrEqual(9)
  found.forEach((hit, rank) => expect(Math.abs(hit.score - expected[rank]!.score), `${label} #${rank}`).toBeLessThan(0.01))
}

/** `index`, its searches counted in `counter.asked` (set back to 0 at will): what an index in front asks of the one behind. */
function countedSearches(index: SearchIndex): { index: SearchIndex; counter: { asked: number } } {
  const counter = { asked: 0 }
  const { passageText } = index
  const counted: SearchIndex = {
    ...index,
    fullText: (...args) => (counter.asked++, index.fullText(...args)),
    nearest: (...args) => (counter.asked++, index.nearest(...args)),
    ...(passageText === undefined ? {} : { passageText: (...args) => (counter.asked++, passageText(...args)) }),
  }
  return { index: counted, counter }
}

/** Hits as compared: ids in order, scores to 9 decimals (sums in another order differ in the last bits; LanceDB's, in Float32 over threads, are left out), words matched. */
const comparable = (hits: TextHit[], withScores = true) => hits.map(({ id, score, matched }) => `${id} ${withScores ? score.toFixed(9) : ''} ${matched}`)

describe('the resident index', () => {
  const store = createMemoryStore()
  let memory: SearchIndex
  let directory: string
  let lancedb: SearchIndex
  let resident: SearchIndex

  beforeAll(async () => {
    await importDemo(store.warehouse)
    directory = await mkdtemp(join(tmpdir(), 'er-resident-'))
    memory = createMemorySearchIndex()
    lancedb = await createLancedbSearchIndex({ uri: directory, dimensions: embedder.dimensions })
    for (const index of [memory, lancedb]) await createIndexer({ store, index, embedder }).catchUp()
    // Loaded from the LanceDB index already built, as `serve` opens it.
    const loaded = await loadedResident(lancedb)
    resident = loaded.index
    const canonical = (await store.listEntities({ qualifiers: [], after: null, limit: 1000 })).entities.length
    expect(loaded.entities).toBe(canonical)
  }, 120_000)

  afterAll(async () => {
    await resident.close()
    await rm(directory, { recursive: true, force: true })
  })

  it('ranks full text exactly as the memory index does: the same hits, order, scores and words matched, for every query of both relevance sets', { timeout: 180_000 }, async () => {
    for (const q of QUERIES) {
      const query = parseGffs(q, { allowFreeText: true })
      const text = textQueryOf(query.text.filter((term) => !term.negated), nicknames)
      if (text.words.length + text.phrases.length === 0) continue
      const [expected, found] = await Promise.all([memory.fullText(text, query.qualifiers, 100), resident.fullText(text, query.qualifiers, 100)])
      expect(comparable(found), q).toEqual(comparable(expected))
    }
  })

  it('ranks queries of up to 543 words itself, exactly as the memory index does (past 31, a word is counted in its slot\'s row of bits); longer ones are left to the index behind', async () => {
    // Typed, a query has at most 32 terms; a word's WordNet relatives (`doctors`: 38) make more. Made here as search makes a typed one, 30 words at a time.
    const textOf = (words: string[]) => ({
      words: Array.from({ length: Math.ceil(words.length / 30) }, (_, at) => textQueryOf(parseGffs(words.slice(30 * at, 30 * at + 30).join(' '), { allowFreeText: true }).text, nicknames).words).flat(),
      phrases: [],
    })
    // Words no entity holds first, so that what matches lies past the 31st word (and the 63rd, the 127th).
    const fillerOf = (count: number, mark = '') => Array.from({ length: count }, (_, at) => `qzx${String.fromCharCode(97 + (at % 26))}${at}${mark}`)
    const filler = fillerOf(31)
    const queries = [
      [...filler, 'house', 'committee', 'ways', 'means'],
      [...filler, 'senator', 'adams', 'jon', 'presidnt', 'health', 'care'],
      [...fillerOf(40), 'house', ...fillerOf(60, 'b'), 'committee', 'ways', ...fillerOf(30, 'c'), 'means', 'adams'],
      ['health', 'care', 'veterans', 'affairs', 'tax', 'relief', 'senate', 'finance', 'john', 'adams', 'judiciary', 'agriculture', 'nutrition', 'forestry', 'energy', 'commerce', 'homeland', 'security', 'appropriations', 'defense', 'intelligence', 'education', 'labor', 'pensions', 'banking', 'housing', 'urban', 'transportation', 'infrastructure', 'oversight', 'reform', 'rules', 'budget', 'ways', 'means', 'foreign', 'relations', 'armed', 'services', 'small', 'business', 'aderholt'],
    ]
    for (const words of queries) {
      const text = textOf(words)
      expect(text.words.length).toBeGreaterThan(31)
      for (const qualifiers of [[], parseGffs('type:committee', { allowFreeText: false }).qualifiers]) {
        const [expected, found] = [await memory.fullText(text, qualifiers, 100), await resident.fullText(text, qualifiers, 100)]
        expect(found.length, words.join(' ')).toBeGreaterThan(0)
        expect(comparable(found), words.join(' ')).toEqual(comparable(expected))
      }
    }
    for (const words of [queries[0]!, queries[2]!]) expect((await resident.fullText(textOf(words), [], 100))[0]).toMatchObject({ id: 'cmtehswm', matched: 4 })
    // As search asks for a word's WordNet relatives: `take` has 149.
    const relatives = { words: relativesOf(['take'], await loadWordRelatives()), phrases: [] }
    expect(relatives.words.length).toBeGreaterThan(127)
    expect(comparable(await resident.fullText(relatives, [], 100))).toEqual(comparable(await memory.fullText(relatives, [], 100)))
    // 544 words: LanceDB ranks them (its scores, not the memory index's).
    const longest = textOf([...fillerOf(542), 'ways', 'means'])
    expect(longest.words.length).toBe(544)
    expect(comparable(await resident.fullText(longest, [], 100), false)).toEqual(comparable(await lancedb.fullText(longest, [], 100), false))
  })

  it('answers qualifiers on titles, names and identifiers itself while it holds them; past `wideFieldsHeldUpTo` (when loaded, or once writes bring more) the index behind does', async () => {
    const { index: searched, counter } = countedSearches(lancedb)
    // The suite's LanceDB index stays open.
    const counted: SearchIndex = { ...searched, close: async () => {} }
    const WIDE_QUERIES = [
      'adams title:President',
      'johnson title:President',
      'health care title:~act',
      'committee -title:~house',
      'john name:~adams',
      'senator name:"John Adams"',
      'representative localIdentifier:A000055',
      'tax localIdentifier:>H type:legislation',
      'budget title:~"appropriations act" jurisdiction:US',
    ]
    const ask = async (index: SearchIndex, q: string) => {
      const query = parseGffs(q, { allowFreeText: true })
      const [vector] = await embedder.embed([query.text.map((term) => term.text).join(' ')])
      return { text: await index.fullText(textQueryOf(query.text, nicknames), query.qualifiers, 100), nearest: await index.nearest(vector!, query.qualifiers, 20) }
    }
    const { index: holding } = await loadedResident(counted)
    counter.asked = 0
    for (const q of WIDE_QUERIES) {
      const [expected, found] = [await ask(memory, q), await ask(holding, q)]
      expect(comparable(found.text), q).toEqual(comparable(expected.text))
      expect(found.nearest.map((hit) => hit.id).sort(), q).toEqual(expected.nearest.map((hit) => hit.id).sort())
      found.nearest.forEach((hit, rank) => expect(Math.abs(hit.score - expected.nearest[rank]!.score), `${q} #${rank}`).toBeLessThan(0.01))
    }
    expect(counter.asked).toBe(0)
    expect((await ask(holding, 'adams title:President')).text.map((hit) => hit.id).sort()).toEqual(['a000039', 'a000041'])
    // Writes keep the values current: an entity written, then retitled, is found by its new title alone.
    const state = await holding.state()
    const minister: IndexedEntity = { id: 'zz000005', fields: { type: 'person', jurisdiction: 'US', title: 'President' }, tokens: ['adams'], names: ['john', 'adams'], vector: (await embedder.embed(['adams']))[0]! }
    const retitled: IndexedEntity = { ...minister, fields: { ...minister.fields, title: 'Minister to Great Britain' } }
    for (const upserted of [minister, retitled]) {
      for (const index of [holding, memory]) await index.apply({ upserts: [upserted], removals: [], state })
      for (const q of ['adams title:President', 'adams title:~minister']) expect(comparable((await ask(holding, q)).text), q).toEqual(comparable((await ask(memory, q)).text))
    }
    expect((await ask(holding, 'adams title:~minister')).text.map((hit) => hit.id)).toEqual(['zz000005'])
    expect((await ask(holding, 'adams title:President')).text.map((hit) => hit.id).sort()).toEqual(['a000039', 'a000041'])
    expect(counter.asked).toBe(0)
    // Past the most held when loaded: the index behind answers.
    const { index: many, entities } = await loadedResident(counted, { wideFieldsHeldUpTo: 100 })
    expect(entities).toBeGreaterThan(100)
    counter.asked = 0
    await ask(many, 'adams title:~minister')
    expect(counter.asked).toBe(2)
    await ask(many, 'adams type:person')
    expect(counter.asked).toBe(2)
    // Held when loaded, until writes bring more.
    const { index: few } = await loadedResident(counted, { wideFieldsHeldUpTo: entities + 1 })
    counter.asked = 0
    await ask(few, 'adams title:~minister')
    expect(counter.asked).toBe(0)
    const added: IndexedEntity[] = ['zz000003', 'zz000004'].map((id) => ({ id, fields: { type: 'person', jurisdiction: 'US-ZZ', title: 'Minister' }, tokens: ['minister'], names: [], vector: minister.vector }))
    await few.apply({ upserts: added, removals: [], state })
    await ask(few, 'adams title:~minister')
    expect(counter.asked).toBe(2)
    await few.apply({ upserts: [], removals: added.map((entity) => entity.id), state })
    for (const index of [holding, memory]) await index.apply({ upserts: [], removals: ['zz000005'], state })
    for (const index of [holding, many, few]) await index.close()
  })

  it('finds the nearest vectors under a prefilter as the exact memory index does, within the Int8 components\' precision', async () => {
    for (const q of ['tax relief for small business', 'veterans health care', 'judges of the federal courts', 'senator from Ohio']) {
      const [vector] = await embedder.embed([q])
      for (const qualifiers of ['type:legislation', 'type:person -status:former', 'jurisdiction:US type:committee']) {
        const { qualifiers: parsed } = parseGffs(qualifiers, { allowFreeText: false })
        const [expected, found] = await Promise.all([memory.nearest(vector!, parsed, 20), resident.nearest(vector!, parsed, 20)])
        expectNearestAsExact(found, expected, `${q} ${qualifiers}`)
      }
    }
  })

  it('keeps up with the writes applied through it: updates, removals, and its compaction', async () => {
    const [first] = (await store.listEntities({ qualifiers: [{ kind: 'qualifier', field: 'type', negated: false, op: 'eq', values: ['person'] }], after: null, limit: 1 })).entities
    const renamed: IndexedEntity = { id: first!.id, fields: { type: 'person', jurisdiction: 'US' }, tokens: ['zyzzyvan'], names: ['zyzzyvan'], vector: (await embedder.embed(['zyzzyvan']))[0]! }
    const state = await resident.state()
    const q = { words: [queryWord('zyzzyvan', ['zyzzyvan'])], phrases: [] }
    await resident.apply({ upserts: [renamed], removals: [], state })
    await memory.apply({ upserts: [renamed], removals: [], state })
    expect(comparable(await resident.fullText(q, [], 10))).toEqual(comparable(await memory.fullText(q, [], 10)))
    expect((await resident.fullText(q, [], 10)).map((hit) => hit.id)).toEqual([first!.id])
    // Enough versions of one entity that dead slots outnumber the live ones: the documents are made again.
    for (let version = 0; version < 12_000; version += 500) {
      const upserts = Array.from({ length: 500 }, () => renamed)
      await resident.apply({ upserts, removals: [], state })
    }
    expect(comparable(await resident.fullText(q, [], 10))).toEqual(comparable(await memory.fullText(q, [], 10)))
    await resident.apply({ upserts: [], removals: [first!.id], state })
    await memory.apply({ upserts: [], removals: [first!.id], state })
    expect(await resident.fullText(q, [], 10)).toEqual([])
    const broad = parseGffs('committee house', { allowFreeText: true })
    const text = textQueryOf(broad.text, nicknames)
    expect(comparable(await resident.fullText(text, [], 100))).toEqual(comparable(await memory.fullText(text, [], 100)))
  }, 120_000)

  it('asked again with the same prefilters after a write, ranks what the write changed (what each prefilter keeps is counted again)', async () => {
    // Two prefilters asked in turn: the index keeps both until a write.
    const prefilters = ['jurisdiction:US-ZZ type:person', 'jurisdiction:US-ZZ'].map((filter) => parseGffs(filter, { allowFreeText: false }).qualifiers)
    const q = { words: [queryWord('quokka', ['quokka'])], phrases: [] }
    const [vector] = await embedder.embed(['quokka'])
    const askUnder = async (qualifiers: Qualifier[]) => [(await resident.fullText(q, qualifiers, 10)).map((hit) => hit.id), (await resident.nearest(vector!, qualifiers, 10)).map((hit) => hit.id)]
    const ask = async () => {
      const [first, second] = [await askUnder(prefilters[0]!), await askUnder(prefilters[1]!)]
      expect(second).toEqual(first)
      return first
    }
    expect(await ask()).toEqual([[], []])
    const state = await resident.state()
    const moved: IndexedEntity = { id: 'zz000001', fields: { type: 'person', jurisdiction: 'US-ZZ' }, tokens: ['quokka'], names: ['quokka'], vector: vector! }
    for (const index of [resident, memory]) await index.apply({ upserts: [moved], removals: [], state })
    expect(await ask()).toEqual([['zz000001'], ['zz000001']])
    for (const index of [resident, memory]) await index.apply({ upserts: [], removals: ['zz000001'], state })
    expect(await ask()).toEqual([[], []])
  })

  it('leaves search to the index behind when it cannot load from it, and keeps nothing of the writes', async () => {
    // The memory index cannot be scanned.
    const behind = createMemorySearchIndex()
    const inFront = await createResidentSearchIndex({ behind, dimensions: embedder.dimensions })
    await createIndexer({ store, index: inFront, embedder }).catchUp()
    const text = textQueryOf(parseGffs('house committee', { allowFreeText: true }).text, nicknames)
    const [vector] = await embedder.embed(['agriculture'])
    const { qualifiers } = parseGffs('type:committee', { allowFreeText: false })
    expect(comparable(await inFront.fullText(text, [], 100))).toEqual(comparable(await behind.fullText(text, [], 100)))
    expect(await inFront.nearest(vector!, qualifiers, 10)).toEqual(await behind.nearest(vector!, qualifiers, 10))
    expect((await inFront.fullText(text, [], 100)).length).toBeGreaterThan(10)
  })

  it('reads the state of the index behind once, knows the state of each write through it, and reads it again after a failed write or a clear', async () => {
    const behind = createMemorySearchIndex()
    let reads = 0
    let failNext = false
    const counted: SearchIndex = {
      ...behind,
      state: () => (reads++, behind.state()),
      apply: async (change) => {
        if (failNext) {
          failNext = false
          // Half a step: the entities written, the state not (as a crash between the two would leave it).
          await behind.apply({ ...change, state: await behind.state() })
          throw new Error('the disk is full')
        }
        return behind.apply(change)
      },
    }
    const inFront = await createResidentSearchIndex({ behind: counted, dimensions: 0 })
    expect(await Promise.all([inFront.state(), inFront.state(), inFront.state()])).toEqual(Array(3).fill({ cursor: null, embedderId: null }))
    expect(reads).toBe(1)
    const step = (cursor: string) => ({ upserts: [], removals: [], state: { cursor, embedderId: 'none' } })
    await inFront.apply(step('c1'))
    expect(await inFront.state()).toEqual({ cursor: 'c1', embedderId: 'none' })
    expect(reads).toBe(1)
    failNext = true
    await expect(inFront.apply(step('c2'))).rejects.toThrow('the disk is full')
    expect(await inFront.state()).toEqual({ cursor: 'c1', embedderId: 'none' })
    expect(reads).toBe(2)
    await inFront.clear()
    expect(await inFront.state()).toEqual(await behind.state())
    expect(reads).toBe(3)
  })
})

/** How many passages an index's scan brings. */
async function passagesIn(index: SearchIndex): Promise<number> {
  let count = 0
  for await (const batch of index.scan!({ passagesUpTo: Number.MAX_SAFE_INTEGER })) for (const { passages } of batch.passages ?? []) count += passages.length
  return count
}

describe("the resident index with the texts' passages", () => {
  const store = createMemoryStore()
  let blobs: BlobStore
  let memory: SearchIndex
  let directory: string
  let lancedb: SearchIndex
  /** LanceDB's `passageText`, counted: what the resident index asks of the index behind. */
  let askedBehind = 0
  const opened: SearchIndex[] = []
  /** A resident index loaded from the LanceDB index (as `serve` opens it), holding up to `passagesHeldUpTo` passages. */
  const residentOver = async (passagesHeldUpTo?: number) => {
    const { index } = await loadedResident(lancedb, passagesHeldUpTo === undefined ? {} : { passagesHeldUpTo })
    opened.push(index)
    return index
  }
  const TEXTS_QUERIES = [
    ...RELEVANCE_SET.filter(({ kind }) => kind === 'texts').map(({ q }) => q),
    'immigration reform citizenship',
    'health insurance type:legislation',
    'embassy security funds -jurisdiction:US-ZZ',
    '"cloture motion"',
    'cloture "motion to proceed"',
    'appropriations',
  ]
  const texts = (q: string) => {
    const query = parseGffs(q, { allowFreeText: true })
    return { text: textQueryOf(query.text, nicknames), qualifiers: query.qualifiers }
  }

  beforeAll(async () => {
    blobs = await importDemo(store.warehouse)
    directory = await mkdtemp(join(tmpdir(), 'er-resident-passages-'))
    memory = createMemorySearchIndex()
    const onDisk = await createLancedbSearchIndex({ uri: directory, dimensions: embedder.dimensions })
    lancedb = {
      ...onDisk,
      passageText: async (...asked) => {
        askedBehind++
        return onDisk.passageText!(...asked)
      },
    }
    for (const index of [memory, lancedb]) await createIndexer({ store, index, embedder, texts: createEntityTexts({ blobs }) }).catchUp()
  }, 120_000)

  afterAll(async () => {
    for (const index of opened) await index.close().catch(() => {})
    await rm(directory, { recursive: true, force: true })
  })

  it('holds them when loaded, and ranks them exactly as the memory index does, asking the index behind nothing', async () => {
    const resident = await residentOver()
    askedBehind = 0
    for (const q of TEXTS_QUERIES) {
      const { text, qualifiers } = texts(q)
      const [expected, found] = await Promise.all([memory.fullText(text, qualifiers, 100), resident.fullText(text, qualifiers, 100)])
      expect(comparable(found), q).toEqual(comparable(expected))
    }
    expect(askedBehind).toBe(0)
    // The bill's text is what finds it.
    expect((await resident.fullText(texts('"cloture motion"').text, [], 100)).some((hit) => hit.inTextsOnly)).toBe(true)
  })

  it('keeps them current with the writes through it: a text replaced, an entity removed', async () => {
    const resident = await residentOver()
    const q = texts('quokka wallaby')
    const state = await resident.state()
    const bill: IndexedEntity = { id: 's1113', fields: { type: 'legislation', jurisdiction: 'US' }, tokens: ['bill'], names: [], vector: (await embedder.embed(['bill']))[0]!, passages: [{ tokens: tokenize('quokka wallaby quokka') }, { tokens: tokenize('wallaby') }] }
    for (const index of [resident, memory]) await index.apply({ upserts: [bill], removals: [], state })
    expect((await resident.fullText(q.text, [], 10)).map((hit) => [hit.id, hit.matched, hit.inTextsOnly])).toEqual([['s1113', 2, true]])
    expect(comparable(await resident.fullText(q.text, [], 10))).toEqual(comparable(await memory.fullText(q.text, [], 10)))
    const other = texts('cloture motion')
    expect(comparable(await resident.fullText(other.text, [], 100))).toEqual(comparable(await memory.fullText(other.text, [], 100)))
    for (const index of [resident, memory]) await index.apply({ upserts: [], removals: ['s1113'], state })
    expect(await resident.fullText(q.text, [], 10)).toEqual([])
    expect(comparable(await resident.fullText(other.text, [], 100))).toEqual(comparable(await memory.fullText(other.text, [], 100)))
  })

  it('leaves them to the index behind past the most it holds: when loaded, and once writes bring more', async () => {
    const held = await passagesIn(lancedb)
    expect(held).toBeGreaterThan(10)
    const many = await residentOver(10)
    askedBehind = 0
    const { text } = texts('cloture motion')
    expect((await many.fullText(text, [], 100)).some((hit) => hit.inTextsOnly)).toBe(true)
    expect(askedBehind).toBe(1)
    const few = await residentOver(held + 1)
    askedBehind = 0
    await few.fullText(text, [], 100)
    expect(askedBehind).toBe(0)
    const state = await few.state()
    const withTwo: IndexedEntity = { id: 'zz000002', fields: { type: 'legislation', jurisdiction: 'US-ZZ' }, tokens: ['bill'], names: [], vector: (await embedder.embed(['bill']))[0]!, passages: [{ tokens: ['one'] }, { tokens: ['two'] }] }
    await few.apply({ upserts: [withTwo], removals: [], state })
    await few.fullText(text, [], 100)
    expect(askedBehind).toBe(1)
    await few.apply({ upserts: [], removals: ['zz000002'], state })
  })
})

describe('the resident index in front of one that other instances write too (PostgreSQL, shared)', () => {
  const store = createMemoryStore()
  let blobs: BlobStore
  let db: Kysely<any>
  let memory: SearchIndex
  /** Another instance's: the indexing one, writing the shared index itself. */
  let writer: SearchIndex
  /** This instance's: in memory, in front of the same index. */
  let reader: ResidentSearchIndex
  let counter: { asked: number }
  const catchUp = () => Promise.all([memory, writer].map((index) => createIndexer({ store, index, embedder, texts: createEntityTexts({ blobs }) }).catchUp()))
  const search = (q: string) => {
    const query = parseGffs(q, { allowFreeText: true })
    return { text: textQueryOf(query.text, nicknames), qualifiers: query.qualifiers }
  }
  /** Every query of the first relevance set, and some of the bills' texts, answered by the reader as by the memory index. */
  const expectSameAsMemory = async (extra: string[] = []) => {
    for (const q of [...RELEVANCE_SET.map((each) => each.q), 'cloture motion', '"motion to proceed"', ...extra]) {
      const { text, qualifiers } = search(q)
      expect(comparable(await reader.fullText(text, qualifiers, 100)), q).toEqual(comparable(await memory.fullText(text, qualifiers, 100)))
    }
  }

  beforeAll(async () => {
    blobs = await importDemo(store.warehouse)
    db = pgliteVectorDatabase()
    memory = createMemorySearchIndex()
    writer = await createPostgresSearchIndex({ db, dimensions: embedder.dimensions })
    await catchUp()
    const behind = countedSearches(await createPostgresSearchIndex({ db, dimensions: embedder.dimensions }))
    counter = behind.counter
    reader = (await loadedResident(behind.index, { othersWrite: true, passagesHeldUpTo: 100_000 })).index
  }, 180_000)

  afterAll(async () => {
    await reader?.close()
    await db?.destroy()
  })

  it('loads what the shared index holds: full text (passages too) ranked as the memory index ranks it, vectors as PostgreSQL holds them, asking it nothing', async () => {
    const before = counter.asked
    await expectSameAsMemory()
    // The vectors came through pgvector's binary form: the nearest are those of exact search.
    for (const q of ['agriculture', 'veterans health care']) {
      const [vector] = await embedder.embed([q])
      for (const qualifiers of [[], parseGffs('type:committee', { allowFreeText: false }).qualifiers]) {
        const [found, expected] = await Promise.all([reader.nearest(vector!, qualifiers, 20), memory.nearest(vector!, qualifiers, 20)])
        expectNearestAsExact(found, expected, `${q} ${qualifiers.length}`)
      }
    }
    expect(counter.asked).toBe(before)
    expect(reader.heldState()).toEqual(await writer.state())
  })

  it('takes in what the other instance writes there: creations, renames, deletions and merges, read from it again', async () => {
    await store.warehouse.upsert({ id: 'zzq1', type: 'person', name: 'Quokkabert Wombatson', jurisdiction: 'US-ZZ' })
    await store.warehouse.upsert({ id: 'zzq2', type: 'person', name: 'Wallabina Potoroo', jurisdiction: 'US-ZZ' })
    await store.warehouse.upsert({ id: 'k000367', type: 'person', name: 'Amy Numbatrix' })
    await store.warehouse.delete('hr3590111')
    await store.warehouse.merge('zzq2', 'zzq1')
    await catchUp()
    const quokka = search('Quokkabert')
    // Not seen until followed.
    expect(await reader.fullText(quokka.text, [], 10)).toEqual([])
    const read = await reader.follow(changedEntities(store))
    expect(read).toBe(2)
    expect(reader.heldState()).toEqual(await writer.state())
    expect((await reader.fullText(quokka.text, [], 10)).map((hit) => hit.id)).toEqual(['zzq1'])
    expect((await reader.fullText(search('Wallabina').text, [], 10)).map((hit) => hit.id)).toEqual([])
    expect((await reader.fullText(search('Klobuchar').text, [], 100)).map((hit) => hit.id)).not.toContain('k000367')
    expect((await reader.fullText(search('health care').text, [], 100)).map((hit) => hit.id)).not.toContain('hr3590111')
    await expectSameAsMemory(['Numbatrix', 'Quokkabert Wombatson', 'type:person jurisdiction:US-ZZ quokkabert'])
    // Nothing new: nothing read.
    expect(await reader.follow(changedEntities(store))).toBe(0)
  }, 120_000)

  it('loads again when the shared index was emptied and built again (another instance rebuilt it)', async () => {
    await createIndexer({ store, index: writer, embedder, texts: createEntityTexts({ blobs }) }).rebuild()
    expect(await reader.follow(changedEntities(store))).toBe(0)
    // Loading: the index behind answers meanwhile.
    await within(30_000, () => reader.heldState() !== null)
    expect(reader.heldState()).toEqual(await writer.state())
    await expectSameAsMemory(['Quokkabert Wombatson'])
  }, 120_000)
})

describe.skipIf(postgresDialect.skipReason !== null)('the resident index following the PostgreSQL server while its connections are cut', () => {
  it('fails the rounds whose connection is cut mid-read, and takes in everything at the next', { timeout: 120_000 }, async () => {
    const store = createMemoryStore()
    await importDemo(store.warehouse)
    await withPostgresClient(POSTGRES_URL, (client) => client.query('create extension if not exists pg_trgm schema public')).catch(() => undefined)
    const schema = await freshPostgresSchema()
    const url = new URL(schema.url)
    url.searchParams.set('options', `${url.searchParams.get('options')},public`)
    url.searchParams.set('application_name', 'er_following_reader')
    // Each instance's connections as the store makes them (a connection cut is that query's failure, never the process's).
    const readerStore = await createPostgresStore({ connectionString: url.href })
    url.searchParams.delete('application_name')
    const writerStore = await createPostgresStore({ connectionString: url.href })
    const admin = new pg.Client({ connectionString: url.href })
    await admin.connect()
    try {
      const writer = await createPostgresSearchIndex({ db: writerStore.db, dimensions: 0 })
      const memory = createMemorySearchIndex()
      const catchUp = () => Promise.all([memory, writer].map((index) => createIndexer({ store, index, embedder: createNoEmbedder() }).catchUp()))
      await catchUp()
      const reader = (await loadedResident(await createPostgresSearchIndex({ db: readerStore.db, dimensions: 0 }), { othersWrite: true, dimensions: 0 })).index
      /** A round whose read of the entities is cut: held up by a lock on their table, its connection terminated while it waits. */
      const cutRound = async () => {
        await admin.query('begin')
        await admin.query('lock table search_entities in access exclusive mode')
        const following = reader.follow(changedEntities(store))
        const waiting = `select pid from pg_stat_activity where application_name = 'er_following_reader' and wait_event_type = 'Lock'`
        await within(10_000, async () => (await admin.query(waiting)).rows.length > 0)
        await admin.query(`select pg_terminate_backend(pid) from (${waiting}) as held`)
        await admin.query('rollback')
        return following
      }
      /** As `serve`'s loop follows: a round that fails (the pool's connection that was cut, lent once more) is tried again. */
      const followAgain = async () => {
        for (let tries = 1; ; tries++) {
          try {
            return await reader.follow(changedEntities(store))
          } catch (error) {
            if (tries === 3) throw error
          }
        }
      }
      for (let round = 0; round < 12; round++) {
        await store.warehouse.upsert({ id: `zzcut${round}`, type: 'person', name: `Cutmember Roundson${round}` })
        if (round % 3 === 2) await store.warehouse.delete(`zzcut${round - 1}`)
        await catchUp()
        if (round % 2 === 1) await expect(cutRound()).rejects.toThrow('the database is unavailable')
        else await followAgain()
      }
      // The last round was cut: what it would have read is read now.
      expect(reader.heldState()).not.toEqual(await writer.state())
      await followAgain()
      expect(reader.heldState()).toEqual(await writer.state())
      for (const q of ['Cutmember', 'Roundson', 'Roundson7', 'Roundson10', 'Roundson11', ...RELEVANCE_SET.slice(0, 20).map((each) => each.q)]) {
        const text = textQueryOf(parseGffs(q, { allowFreeText: true }).text, nicknames)
        expect(comparable(await reader.fullText(text, [], 100)), q).toEqual(comparable(await memory.fullText(text, [], 100)))
      }
      await reader.close()
    } finally {
      await admin.end()
      await readerStore.close()
      await writerStore.close()
      await schema.drop()
    }
  })
})

describe("the resident index's partitions of vectors", () => {
  const DIMENSIONS = 100
  let state = 7
  const random = () => (state = (state * 48271) % 2147483647) / 2147483647
  const unit = (vector: Float32Array) => {
    const norm = Math.hypot(...vector)
    return vector.map((component) => component / norm)
  }
  /** Clustered as embeddings are: 40 centres, each vector a centre and as much noise again. */
  const centres = Array.from({ length: 40 }, () => unit(Float32Array.from({ length: DIMENSIONS }, () => random() - 0.5)))
  const near = (centre: Float32Array) => unit(centre.map((component) => component + (random() - 0.5) * 0.3))
  const TYPES = ['person', 'person', 'person', 'legislation', 'legislation', 'committee']
  const entityOf = (n: number): IndexedEntity => ({ id: `v${n}`, fields: { type: TYPES[n % TYPES.length]! }, tokens: [], names: [], vector: near(centres[n % centres.length]!) })
  const vectorsOf = new Map<string, Float32Array>()
  const cosine = (id: string, query: Float32Array) => vectorsOf.get(id)!.reduce((sum, component, at) => sum + component * query[at]!, 0)
  const queries = Array.from({ length: 40 }, (_, at) => near(centres[at % centres.length]!))
  /** Mean recall@10 against the exact memory index: a hit counts when its cosine reaches the exact tenth's. */
  async function recallOf(resident: SearchIndex, exact: SearchIndex, filter: string): Promise<number> {
    const { qualifiers } = parseGffs(filter, { allowFreeText: false })
    let found = 0
    for (const query of queries) {
      const tenth = (await exact.nearest(query, qualifiers, 10))[9]!.score
      found += (await resident.nearest(query, qualifiers, 10)).filter((hit) => cosine(hit.id, query) >= tenth - 1e-6).length
    }
    return found / (10 * queries.length)
  }
  /**
   * The memory index (exact) holding `entities`, and a resident index loaded from them that finds no
   * vectors exactly, whatever the prefilter (the index behind it answers no nearest vectors: its
   * partitions do; a memory index cannot be scanned: the entities are given).
   */
  async function indexes(entities: IndexedEntity[]): Promise<{ exact: SearchIndex; resident: SearchIndex }> {
    const exact = createMemorySearchIndex()
    await exact.apply({ upserts: entities, removals: [], state: await exact.state() })
    for (const entity of entities) vectorsOf.set(entity.id, entity.vector)
    const behind: SearchIndex = {
      ...exact,
      apply: async () => {},
      nearest: () => Promise.reject(new Error('the partitions answer')),
      async *scan() {
        yield { entities, withPassages: [] }
      },
    }
    const { index: resident } = await loadedResident(behind, { dimensions: DIMENSIONS, exactVectorsUpTo: 0 })
    return { exact, resident }
  }
  /** The same writes to both. */
  async function write(targets: SearchIndex[], upserts: IndexedEntity[], removals: string[] = []) {
    for (const entity of upserts) vectorsOf.set(entity.id, entity.vector)
    for (const index of targets) await index.apply({ upserts, removals, state: await index.state() })
  }

  it('finds the nearest vectors with no prefilter and under broad ones at a recall@10 of 0.95 or more against exact search, their scores exact', async () => {
    const { exact, resident } = await indexes(Array.from({ length: 3000 }, (_, n) => entityOf(n)))
    for (const filter of ['', 'type:person', 'type:legislation', 'type:committee', '-type:person']) expect(await recallOf(resident, exact, filter), filter).toBeGreaterThanOrEqual(0.95)
    const [query] = queries
    const hits = await resident.nearest(query!, [], 20)
    expect(hits).toHaveLength(20)
    hits.forEach((hit, rank) => {
      expect(Math.abs(hit.score - cosine(hit.id, query!)), hit.id).toBeLessThan(0.01)
      if (rank > 0) expect(hit.score).toBeLessThanOrEqual(hits[rank - 1]!.score)
    })
  })

  it('keeps its partitions current with the writes after load: new vectors (past their room, and past four times what they were trained for), updates, removals and compaction', async () => {
    const { exact, resident } = await indexes(Array.from({ length: 500 }, (_, n) => entityOf(n)))
    for (let first = 500; first < 2500; first += 250) await write([exact, resident], Array.from({ length: 250 }, (_, at) => entityOf(first + at)))
    expect(await recallOf(resident, exact, '')).toBeGreaterThanOrEqual(0.95)
    // Each query's nearest moved onto it, and the next ten removed.
    const [query] = queries
    const nearest = (await exact.nearest(query!, [], 11)).map((hit) => hit.id)
    await write([exact, resident], [{ ...entityOf(Number(nearest[0]!.slice(1))), vector: query! }], nearest.slice(1))
    const hits = await resident.nearest(query!, [], 10)
    expect(hits[0]).toMatchObject({ id: nearest[0] })
    expect(hits[0]!.score).toBeGreaterThan(0.99)
    expect(hits.filter((hit) => nearest.slice(1).includes(hit.id))).toEqual([])
    expect(await recallOf(resident, exact, 'type:legislation')).toBeGreaterThanOrEqual(0.95)
    // Enough versions of the same entities that the documents are made again (compaction), the partitions with them.
    for (let round = 0; round < 12; round++) await write([exact, resident], Array.from({ length: 1000 }, (_, at) => entityOf(at)))
    expect(await recallOf(resident, exact, '')).toBeGreaterThanOrEqual(0.95)
  })
})
