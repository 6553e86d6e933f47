import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PDFDocument, StandardFonts } from 'pdf-lib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createWordVectorEmbedder } from '../../src/embedders/index.js'
import { parseGffs } from '../../src/gffs/parse.js'
import { createLancedbSearchIndex } from '../../src/lancedb/index.js'
import { createMemoryBlobStore } from '../../src/memory/memory-blob-store.js'
import { createMemoryStore } from '../../src/memory/memory-store.js'
import type { SearchIndex } from '../../src/ports/search-index.js'
import { passageWordsNeeded, withPassageText } from '../../src/search/passage-ranks.js'
import { createIndexer } from '../../src/search/indexer.js'
import { createSearch, textQueryOf } from '../../src/search/search-service.js'
import { queryWord } from '../../src/search/text.js'
import { createEntityTexts, type TextExtractor } from '../../src/texts/entity-texts.js'
import { extractText } from '../../src/texts/extract.js'
import { PASSAGES, passagesOf } from '../../src/texts/passages.js'
import { importNdjson } from '../../src/warehouse/import.js'
import { DEMO_RECORDS, importDemo } from '../support/demo.js'
import { searchIndexKinds } from '../search/each-search-index.js'

/** The kinds that run on this machine. */
const runnable = searchIndexKinds.filter((kind) => kind.skipReason === null)

const embedder = createWordVectorEmbedder()
const words = (count: number, from = 0) => Array.from({ length: count }, (_, index) => `w${from + index}`).join(' ')

describe('passages', () => {
  it('cuts each text into overlapping passages of a few hundred words, at most so many an entity', () => {
    const step = PASSAGES.words - PASSAGES.overlap
    const passages = passagesOf([words(450), 'short text'])
    expect(passages.map((passage) => passage.split(' ').length)).toEqual([200, 200, 150, 2])
    expect(passages[1]!.split(' ')[0]).toBe(`w${step}`)
    expect(passagesOf([words(100_000)])).toHaveLength(PASSAGES.perEntity)
    expect(passagesOf(['', '  \n '])).toEqual([])
  })
})

/** The demo data, with a record of another bill whose rendition is given here. */
async function demoWith(extra: { id: string; file: string; bytes: Uint8Array; mime: string }[] = []) {
  const store = createMemoryStore()
  const blobs = await importDemo(store.warehouse, createMemoryBlobStore())
  if (extra.length > 0) {
    const directory = await mkdtemp(join(tmpdir(), 'er-texts-'))
    for (const { file, bytes } of extra) await writeFile(join(directory, file), bytes)
    const lines = extra.map(({ id, file, mime }) => JSON.stringify({ id, type: 'legislation', title: id.toUpperCase(), localType: 'bill', texts: [{ type: 'information', renditions: [{ conversion: 'original', mime, filename: file, file }] }] }))
    const report = await importNdjson(lines, { warehouse: store.warehouse, blobs, baseDir: directory })
    await rm(directory, { recursive: true, force: true })
    expect(report.errors).toEqual([])
  }
  return { store, blobs }
}

for (const kind of searchIndexKinds) {
  const describeKind = kind.skipReason === null ? describe : describe.skip
  describeKind(`search inside the texts [${kind.name}]${kind.skipReason === null ? '' : ` skipped: ${kind.skipReason}`}`, () => {
    let opened: { index: SearchIndex; dispose(): Promise<void> }
    beforeAll(async () => {
      opened = await kind.open(embedder.dimensions)
    })
    afterAll(() => opened.dispose())

    it('finds a bill by words only its text holds, under prefilters as for entities; without texts, as before', async () => {
      await opened.index.clear()
      const { store, blobs } = await demoWith()
      const search = createSearch(store, { index: opened.index, embedder })
      const ids = async (q: string) => (await search.search(parseGffs(q, { allowFreeText: true }))).map((entity) => entity.id)
      await createIndexer({ store, index: opened.index, embedder }).catchUp()
      expect((await ids('immigration reform citizenship')).slice(0, 5)).not.toContain('s1113')
      await createIndexer({ store, index: opened.index, embedder, texts: createEntityTexts({ blobs }) }).rebuild()
      expect((await ids('immigration reform citizenship')).slice(0, 5)).toContain('s1113')
      expect((await ids('firearms trafficking')).slice(0, 5)).toContain('s54113')
      expect((await ids('filibuster cloture')).slice(0, 5)).toContain('sres5113')
      expect((await ids('firearms trafficking localType:bill')).slice(0, 5)).toContain('s54113')
      expect(await ids('firearms trafficking type:person')).not.toContain('s54113')
      expect(await ids('firearms trafficking -jurisdiction:US')).not.toContain('s54113')
      // What the texts do not hold ranks as before: an exact title first.
      expect((await ids('Patient Protection and Affordable Care Act'))[0]).toBe('hr3590111')
    })

    it('follows the feed: replaced bytes, a deletion and a merge replace or remove the passages', async () => {
      await opened.index.clear()
      const html = (body: string) => new TextEncoder().encode(`<html><body><p>${body}</p></body></html>`)
      const { store, blobs } = await demoWith([{ id: 'hr9999113', file: 'hr9999.html', bytes: html('lighthouse keepers and their pensions'), mime: 'text/html' }])
      const indexer = createIndexer({ store, index: opened.index, embedder, texts: createEntityTexts({ blobs }) })
      await indexer.catchUp()
      const found = async (q: string) => (await opened.index.fullText(textQueryOf(parseGffs(q, { allowFreeText: true }).text, new Map()), [], 1000)).map((hit) => hit.id)
      expect(await found('lighthouse pensions')).toContain('hr9999113')
      const directory = await mkdtemp(join(tmpdir(), 'er-texts-'))
      await writeFile(join(directory, 'hr9999.html'), html('volcano monitoring stations'))
      const line = JSON.stringify({ id: 'hr9999113', type: 'legislation', title: 'HR9999113', localType: 'bill', texts: [{ type: 'information', renditions: [{ conversion: 'original', mime: 'text/html', filename: 'hr9999.html', file: 'hr9999.html' }] }] })
      expect((await importNdjson([line], { warehouse: store.warehouse, blobs, baseDir: directory })).errors).toEqual([])
      await rm(directory, { recursive: true, force: true })
      const [change] = (await store.listChanges({ qualifiers: [], after: null, limit: 10_000, window: 10_000 })).changes.filter((c) => c.entityId === 'hr9999113').slice(-1)
      expect(change!.changedKeys).toEqual(['texts'])
      await indexer.catchUp()
      expect(await found('lighthouse pensions')).not.toContain('hr9999113')
      expect(await found('volcano monitoring')).toContain('hr9999113')
      expect(await found('firearms trafficking')).toContain('s54113')
      await store.warehouse.delete('s54113')
      await store.warehouse.merge('sres5113', 's1113')
      await indexer.catchUp()
      expect(await found('firearms trafficking')).not.toContain('s54113')
      expect(await found('filibuster cloture')).not.toContain('sres5113')
    })

    it('indexes an entity whose rendition cannot be read without its passages, with a warning, and goes on', async () => {
      await opened.index.clear()
      const report = await PDFDocument.create()
      report.addPage().drawText('Glacier observatory funding for alpine research stations', { x: 50, y: 700, font: await report.embedFont(StandardFonts.Helvetica), size: 12 })
      const { store, blobs } = await demoWith([
        { id: 'hr9998113', file: 'binary.html', bytes: Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 1, 2]), mime: 'text/html' },
        { id: 'hr9997113', file: 'scan.pdf', bytes: new TextEncoder().encode('%PDF-1.7 not really'), mime: 'application/pdf' },
        { id: 'hr9996113', file: 'report.pdf', bytes: await report.save(), mime: 'application/pdf' },
      ])
      const warnings: string[] = []
      await createIndexer({ store, index: opened.index, embedder, texts: createEntityTexts({ blobs, warn: (message) => warnings.push(message) }) }).catchUp()
      expect(warnings).toEqual([expect.stringMatching(/binary\.html\).*binary content/), expect.stringMatching(/scan\.pdf\).*unreadable application\/pdf/)])
      const idsFor = async (q: string) => (await opened.index.fullText(textQueryOf(parseGffs(q, { allowFreeText: true }).text, new Map()), [], 1000)).map((hit) => hit.id)
      expect(await idsFor('HR9998113 HR9997113')).toEqual(expect.arrayContaining(['hr9998113', 'hr9997113']))
      // The other entities' texts are indexed: S. 1 by its passages.
      expect(await idsFor('citizenship')).toContain('s1113')
      // A PDF that can be read is searched by its text.
      const byText = (await opened.index.fullText(textQueryOf(parseGffs('glacier observatory', { allowFreeText: true }).text, new Map()), [], 10)).map((hit) => hit.id)
      expect(byText[0]).toBe('hr9996113')
    })
  })
}

describe('merging passages with entities', () => {
  it('counts a passage only when it holds more than half the typed words, and the entity at its better rank', () => {
    const entities = [
      { id: 'a', score: 3, matched: 1 },
      { id: 'b', score: 2, matched: 1 },
    ]
    const passages = [
      { id: 'b', score: 9, matched: 2 },
      { id: 'c', score: 8, matched: 2 },
      { id: 'd', score: 7, matched: 1 },
    ]
    // Two words: a passage must hold both (d does not).
    expect(withPassageText(entities, passages, 10, 2)).toEqual([
      { id: 'a', score: 3, matched: 1 },
      { id: 'b', score: 2, matched: 2, matchedInFields: 1, inTextsOnly: false },
      { id: 'c', score: 8, matched: 2, inTextsOnly: true },
    ])
    // Three words: two of them are more than half; one is not.
    expect(withPassageText([], [{ id: 'e', score: 1, matched: 1 }], 10, 3)).toEqual([])
    expect(passageWordsNeeded(3)).toBe(2)
    // No typed word (phrases alone): every passage the phrases matched counts.
    expect(withPassageText([], [{ id: 'f', score: 1, matched: 0 }], 10, 0)).toEqual([{ id: 'f', score: 1, matched: 0, inTextsOnly: true }])
  })
})

describe('extracted texts', () => {
  it('are kept beside the bytes: a rebuild reads them instead of extracting again', async () => {
    const { store, blobs } = await demoWith()
    let extractions = 0
    const extract: TextExtractor = async (bytes, mime) => {
      extractions++
      return extractText(bytes, mime)
    }
    const opened = await searchIndexKinds[0]!.open(embedder.dimensions)
    const indexer = createIndexer({ store, index: opened.index, embedder, texts: createEntityTexts({ blobs, extract }) })
    await indexer.catchUp()
    // The demo's renditions with bytes (the others are known by their URL only).
    const withTexts = DEMO_RECORDS.filter((record) => JSON.stringify(record.texts ?? []).includes('"file"')).length
    expect(extractions).toBe(withTexts)
    await indexer.rebuild()
    expect(extractions).toBe(withTexts)
    await opened.dispose()
  })
})

describe('search indexes agree on passages', () => {
  // PGlite starts in 2 to 30 s, by how busy the machine is.
  it('find the same entities by their texts\' words, phrases and qualifiers', { timeout: 120_000 }, async () => {
    const { store, blobs } = await demoWith()
    // One after the other: PGlite's start holds the event loop for seconds, past the bound within
    // which the PostgreSQL kind's reads must be answered (3 s) if it were opening at the same time.
    const opened: Awaited<ReturnType<(typeof runnable)[number]['open']>>[] = []
    for (const kind of runnable) opened.push(await kind.open(embedder.dimensions))
    for (const { index } of opened) await createIndexer({ store, index, embedder, texts: createEntityTexts({ blobs }) }).catchUp()
    const queries = ['immigration reform citizenship', 'firearms trafficking', '"cloture motion"', 'embassy security funds type:legislation', 'health insurance', 'health insurance localType:~bill']
    for (const q of queries) {
      const query = parseGffs(q, { allowFreeText: true })
      const text = textQueryOf(query.text, new Map())
      const [reference, ...others] = await Promise.all(opened.map(async ({ index }) => (await index.fullText(text, query.qualifiers, 1000)).map((hit) => hit.id)))
      expect(reference!.length, q).toBeGreaterThan(0)
      expect(reference!.length, q).toBeLessThan(1000)
      for (const found of others) expect(found.toSorted(), q).toEqual(reference!.toSorted())
    }
    for (const { dispose } of opened) await dispose()
  })
})

describe('search indexes agree on the passages that hold the most words', () => {
  // Of three words, a passage must hold two. Passages of the rarer third word alone outrank the one
  // that holds the two common words: a ranking of any of the words, cut at its limit, left it out.
  /** A bill titled "bill" whose text is cut into these passages (each a space-separated line of tokens). */
  const billWithPassages = (id: string, ...passages: string[]) => ({
    id,
    fields: { type: 'legislation' },
    tokens: ['bill'],
    names: [],
    vector: new Float32Array(embedder.dimensions).fill(0.1),
    passages: passages.map((text) => ({ tokens: text.split(' ') })),
  })
  /** Full text of `words` on every index holding `upserts`: each hit's id and how many words it matched. */
  const fullTextOnEachIndex = async (upserts: ReturnType<typeof billWithPassages>[], words: string[], limit: number, expected: [string, number][]) => {
    const query = { words: words.map((token) => queryWord(token)), phrases: [] }
    for (const kind of runnable) {
      const { index, dispose } = await kind.open(embedder.dimensions)
      await index.apply({ upserts, removals: [], state: { cursor: null, embedderId: 'test' } })
      await index.optimize()
      expect((await index.fullText(query, [], limit)).map((hit) => [hit.id, hit.matched]), kind.name).toEqual(expected)
      await dispose()
    }
  }

  it('find them though many passages of fewer words score higher', { timeout: 120_000 }, async () => {
    const upserts = [
      billWithPassages('both', 'alpha beta filler'),
      ...Array.from({ length: 30 }, (_, n) => billWithPassages(`alpha${n}`, 'alpha filler filler', 'beta filler filler')),
      ...Array.from({ length: 10 }, (_, n) => billWithPassages(`gamma${n}`, 'gamma gamma gamma')),
    ]
    await fullTextOnEachIndex(upserts, ['alpha', 'beta', 'gamma'], 2, [['both', 2]])
  })

  it('answer a query of 32 words (the most a query has) without making every set of 17 of them', { timeout: 120_000 }, async () => {
    const words = Array.from({ length: 32 }, (_, n) => `word${n}`)
    const upserts = [billWithPassages('most', [...words.slice(0, 20), 'filler'].join(' ')), billWithPassages('few', [...words.slice(0, 3), 'filler'].join(' '))]
    await fullTextOnEachIndex(upserts, words, 10, [['most', 20]])
  })
})

describe('a LanceDB index written before passages', () => {
  it('is emptied when opened, and its indexer rebuilds it from the feed with the passages', async () => {
    const { store, blobs } = await demoWith()
    const directory = await mkdtemp(join(tmpdir(), 'er-lancedb-before-passages-'))
    const index = await createLancedbSearchIndex({ uri: directory, dimensions: embedder.dimensions })
    await createIndexer({ store, index, embedder }).catchUp()
    await index.close()
    const lancedb = await import('@lancedb/lancedb')
    const db = await lancedb.connect(directory)
    await db.dropTable('passages')
    db.close()
    const reopened = await createLancedbSearchIndex({ uri: directory, dimensions: embedder.dimensions })
    expect(await reopened.state()).toEqual({ cursor: null, embedderId: null })
    await createIndexer({ store, index: reopened, embedder, texts: createEntityTexts({ blobs }) }).catchUp()
    const search = createSearch(store, { index: reopened, embedder })
    expect((await search.search(parseGffs('immigration reform citizenship', { allowFreeText: true }))).slice(0, 5).map((entity) => entity.id)).toContain('s1113')
    await reopened.close()
    await rm(directory, { recursive: true, force: true })
  })
})
