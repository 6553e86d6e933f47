import { describe, expect, it } from 'vitest'
import { parseGffs } from '../../src/gffs/parse.js'
import type { TextQuery } from '../../src/ports/search-index.js'
import { Documents } from '../../src/resident/documents.js'
import { GramPostings } from '../../src/resident/gram-postings.js'
import { growableUint32 } from '../../src/resident/growable.js'
import { prefilterOf } from '../../src/resident/prefilter.js'
import { rankText } from '../../src/resident/text-ranking.js'
import { rankedValue } from '../../src/resident/top-hits.js'
import { TypedGrams } from '../../src/resident/typed-grams.js'
import { bestFirst, bm25, type FieldStatistics, fieldStatistics, idf, textScorer } from '../../src/search/bm25.js'
import { MATCH_WEIGHTS, nameWords, queryWord, tokenize, trigramsOf } from '../../src/search/text.js'

const field: FieldStatistics = { count: 1000, averageLength: 14, holders: (gram) => (gram.charCodeAt(0) * 7 + gram.charCodeAt(2)) % 300 }

/** The typed trigrams' scores as `textScorer` adds them: each form's distinct trigrams in order, a trigram typed twice counted twice, searched in the text one by one. */
function expectedScore(score: number, names: string[], text: string): number {
  const typed = new Map<string, number>()
  for (const name of names) if (name.length >= 3) for (const gram of new Set(trigramsOf(name))) typed.set(gram, (typed.get(gram) ?? 0) + 1)
  if (text.length < 3) return score
  for (const [gram, times] of typed) {
    let count = 0
    for (let at = text.indexOf(gram); at !== -1; at = text.indexOf(gram, at + 1)) count++
    if (count > 0) score += times * MATCH_WEIGHTS.nameTrigram * bm25(field, count, text.length - 2, idf(field, field.holders(gram)))
  }
  return score
}

/** `text`'s UTF-16 units packed between others (`ab` before, `cd` after: trigrams across the edges would be found if read), as `Documents` packs names. */
function packed(text: string): [Uint16Array, number, number] {
  const around = `ab${text}cd`
  return [Uint16Array.from({ length: around.length }, (_, at) => around.charCodeAt(at)), 2, 2 + text.length]
}

describe("the resident index's typed trigrams", () => {
  const cases: [string[], string][] = [
    [['christian', 'chris', 'kris', 'tisqarzorson'], 'Christian Tisparzorson'.toLowerCase()],
    [['chris', 'christopher'], 'chris christopher chrischris'],
    [['aaa'], 'aaaaaa'],
    [['ab', 'x'], 'abc'],
    [['abc'], 'ab'],
    [[], 'anything at all'],
    [['josé', 'zoë'], 'josé zoë josephine'],
    [['müller', 'muller'], 'hans müller-lüdenscheidt muller'],
    [['北京市', '京市人'], '北京市人 北京'],
    [['a😀b', '😀😀'], 'xa😀b 😀😀😀'],
    [['\u0000\u0000\u0000', '   '], '\u0000\u0000\u0000\u0000    '],
    [['abc', 'bcd'], 'abcd bcd abc'],
    [['abc', 'bcd'], 'c a'],
    [['bab', 'dcd'], 'b d'],
    [['abc'], ''],
    [['\ud800ab', 'b\udc00c'], 'x\ud800ab\udc00c'],
  ]

  it('adds the same scores as searching the text for each typed trigram, to the last bit, in the order they were typed', () => {
    for (const [names, text] of cases) {
      const typed = new TypedGrams(names, field)
      typed.claim()
      try {
        for (const start of [0, 1.25, 17.1]) expect(typed.addScores(start, ...packed(text)), `${names.join(',')} in ${text}`).toBe(expectedScore(start, names, text))
      } finally {
        typed.release()
      }
    }
  })

  it('finds nothing once released, and one query’s trigrams are not another’s', () => {
    const first = new TypedGrams(['smith'], field)
    first.claim()
    first.release()
    const second = new TypedGrams(['jones'], field)
    second.claim()
    expect(second.addScores(0, ...packed('john smith'))).toBe(0)
    expect(second.addScores(0, ...packed('jane jones'))).toBe(expectedScore(0, ['jones'], 'jane jones'))
    second.release()
  })
})

describe("the resident index's packed names", () => {
  it("gives back each slot's names as they were put, and their trigrams' length, whatever units they hold", () => {
    const documents = new Documents(2)
    const namesOfEach = [[], ['anna', 'smith'], [''], ['josé', 'zoë'], ['a😀b', '😀'], ['\ud800', '\udc00x'], ['北京市人'], ['x'.repeat(10_000), 'y'], ['ab']]
    namesOfEach.forEach((names, n) => documents.put({ id: `e${n}`, fields: {}, tokens: ['word'], names, vector: Float32Array.of(1, 0) }))
    namesOfEach.forEach((names, slot) => {
      const text = names.join(' ')
      expect(documents.namesTextOf(slot)).toBe(text)
      expect(documents.namesOf(slot)).toEqual(text === '' ? [] : names)
      expect(documents.gramLength(slot)).toBe(Math.max(0, text.length - 2))
    })
    // Removing a slot takes its trigrams' holders back: `smi` was held by one slot.
    expect(documents.grams.of('smi')!.holders).toBe(1)
    documents.remove('e1')
    expect(documents.grams.of('smi')!.holders).toBe(0)
    expect(documents.grams.of('😀'.charAt(0) + '😀'.charAt(1) + 'b')!.holders).toBe(1)
  })
})

describe("the resident index's trigram postings", () => {
  it('lists the slots whose names hold every trigram, as searching each text would', () => {
    let state = 7
    const random = () => (state = (state * 48271) % 2147483647) / 2147483647
    const letters = 'abcdeé'
    const texts = Array.from({ length: 3000 }, () => Array.from({ length: 2 + Math.floor(random() * 12) }, () => letters[Math.floor(random() * letters.length)]).join(''))
    const postings = new GramPostings()
    texts.forEach((text, slot) => postings.add(slot, text))
    const into = growableUint32()
    for (const name of ['abc', 'aaaa', 'abcab', 'éab', 'ddd', 'cabé', 'eeeee', 'zzz', 'abz']) {
      const grams = [...new Set(trigramsOf(name))]
      postings.holdingAll(grams, into)
      const expected = texts.flatMap((text, slot) => (grams.every((gram) => text.includes(gram)) ? [slot] : []))
      expect(Array.from(into.values.subarray(0, into.length)), name).toEqual(expected)
    }
  })
})

describe("the resident index's full text under a prefilter", () => {
  // 400 entities: a type kept by few (`rare`), one by most (`common`); the word `every` in all of
  // them, `some` in a few, names in a third; one `rare` entity removed (its slot dead).
  const documents = new Documents(2)
  for (let n = 0; n < 400; n++) {
    const tokens = ['every', ...(n % 37 === 0 ? ['some'] : []), ...(n % 5 === 0 ? ['ønske'] : []), ...(n % 11 === 0 ? ['émoji😀'] : [])]
    const names = n % 3 === 0 ? ['anna', n % 2 === 0 ? 'smith' : 'smyth'] : []
    documents.put({ id: `e${String(n).padStart(3, '0')}`, fields: { type: n % 20 === 0 ? 'rare' : 'common' }, tokens, names, vector: Float32Array.of(1, n) })
  }
  documents.remove('e040')
  const query = (...typed: string[]): TextQuery => ({ words: typed.map((token) => queryWord(token, token === 'smith' ? ['smith'] : [])), phrases: [] })
  const prefilter = (filter: string) => prefilterOf(documents, parseGffs(filter, { allowFreeText: false }).qualifiers)
  const allows = (filter: string, id: string) => prefilter(filter)!.allows(documents.slotOf(id)!)

  it('finds what ranking with none finds among the slots the prefilter allows, scores included, whether it marks the slots it keeps or asks it of each posting', () => {
    // A prefilter listing fewer slots than the words' postings marks them (`type:rare`, `type:common` for `every`), a broader one is asked (`type:common` for `some`), as one naming no values is (a negation).
    for (const filter of ['type:rare', 'type:common', '-type:rare', 'type:rare type:common', 'type:none']) {
      for (const typed of [['every'], ['some'], ['every', 'some'], ['ønske', 'émoji😀'], ['smith'], ['every', 'smith'], ['nothing']]) {
        const unfiltered = rankText(documents, query(...typed), null, 1000).filter((hit) => allows(filter, hit.id))
        expect(rankText(documents, query(...typed), prefilter(filter), 1000), `${typed.join(' ')} ${filter}`).toEqual(unfiltered)
      }
    }
  })

  it('leaves no slot marked for the next query, and never finds a removed one', () => {
    expect(rankText(documents, query('every'), prefilter('type:rare'), 1000).map((hit) => hit.id)).not.toContain('e040')
    const everyOne = rankText(documents, query('every'), null, 1000)
    expect(everyOne).toHaveLength(399)
    expect(rankText(documents, query('every'), prefilter('type:common'), 1000)).toHaveLength(399 - 19)
    expect(rankText(documents, query('every'), null, 1000)).toEqual(everyOne)
  })
})

describe("the resident index's bound on what typed trigrams add", () => {
  it('is never below what they add, whatever the names hold and however often', () => {
    let state = 11
    const random = () => (state = (state * 48271) % 2147483647) / 2147483647
    const letters = 'ab c'
    const typedNames = [['aaa'], ['abab', 'baba'], ['abc', 'cab', 'aab'], ['aaaa', 'aaa', 'bbbbb', 'ab', 'cccab']]
    const texts = ['aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'aaa', 'abababababababababab', ...Array.from({ length: 2000 }, () => Array.from({ length: 3 + Math.floor(random() * 40) }, () => letters[Math.floor(random() * letters.length)]).join(''))]
    for (const names of typedNames) {
      const typed = new TypedGrams(names, field)
      const numberOf = new Map(typed.grams.map((gram, number) => [gram, number]))
      typed.claim()
      try {
        for (const text of texts) {
          const length = text.length - 2
          const added = typed.addScores(0, ...packed(text))
          const held = [...new Set(trigramsOf(text))].filter((gram) => numberOf.has(gram))
          const weights = held.reduce((sum, gram) => sum + typed.weightOf(numberOf.get(gram)!), 0)
          expect(added, `${names.join(',')} in ${text}`).toBeLessThanOrEqual(typed.mostAdded(length) * (1 + 1e-9))
          if (held.length > 0) expect(added, `${names.join(',')} in ${text}`).toBeLessThanOrEqual(typed.mostAddedHolding(length, held.length, weights) * (1 + 1e-9))
        }
      } finally {
        typed.release()
      }
    }
  })
})

describe("the resident index's full text, the best few of many", () => {
  // Entities whose word scores and trigram scores disagree: the longer an entity's tokens, the lower
  // its word's BM25, and the more its names repeat the typed name's trigrams, the higher their scores.
  // Groups of identical entities (equal scores) whose ids are not in slot order; some without names.
  const documents = new Documents(2)
  const ids: string[] = []
  for (let n = 0; n < 600; n++) {
    const group = n % 150
    const tokens = ['every', ...Array.from({ length: (group % 6) * 4 + (group % 5) }, (_, at) => `filler${at}`), ...(group % 7 === 0 ? ['fetterman', 'senate', 'bill'] : []), ...(group % 3 === 0 ? ['senate'] : [])]
    const names = group % 4 === 3 ? [] : [group % 5 === 0 ? 'john' : 'mary', ...Array.from({ length: group % 6 }, () => (group % 2 === 0 ? 'feterman' : 'fettermann')), ...(group % 9 === 0 ? ['smith'] : [])]
    const id = `e${String((n * 7919) % 600).padStart(3, '0')}`
    ids.push(id)
    documents.put({ id, fields: { type: group % 10 === 0 ? 'rare' : 'common' }, tokens, names, vector: Float32Array.of(1, n) })
  }
  const word = (token: string, names: string[] = []) => queryWord(token, names)
  const queries: [string, TextQuery][] = [
    ['a common word, a typed name of many trigrams', { words: [word('every', ['fetterman', 'feterman'])], phrases: [] }],
    ['a typed name whose trigrams a few names hold', { words: [word('every', ['smith'])], phrases: [] }],
    ['two words with names', { words: [word('senate', ['senate']), word('fetterman', ['fetterman', 'fettermann'])], phrases: [] }],
    ['a name alone', { words: [word('john', ['john', 'johnny', 'jon'])], phrases: [] }],
    ['a phrase with words', { words: [word('every', ['feterman'])], phrases: [['senate', 'bill']] }],
    ['a phrase alone', { words: [], phrases: [['fetterman', 'senate']] }],
    ['every slot tied', { words: [word('every')], phrases: [] }],
  ]
  const prefilter = prefilterOf(documents, parseGffs('type:common', { allowFreeText: false }).qualifiers)

  it('keeps the best `limit` of all the matches, to the last bit of each score, ties in id order, whatever the limit', () => {
    for (const [name, query] of queries) {
      for (const filter of [null, prefilter]) {
        // A limit above the matches prunes nothing: the reference.
        const all = rankText(documents, query, filter, 10_000)
        expect(all.length, name).toBeGreaterThan(20)
        for (const limit of [1, 2, 5, 13, 40, 100, all.length - 1]) expect(rankText(documents, query, filter, limit), `${name}, best ${limit}`).toEqual(all.slice(0, limit))
      }
    }
  })

  it('ranks slots whose trigram scores lift them over those of better word scores', () => {
    const all = rankText(documents, queries[0]![1], null, 10_000)
    const wordOnly = rankText(documents, { words: [word('every')], phrases: [] }, null, 10_000)
    const wordScore = new Map(wordOnly.map((hit) => [hit.id, hit.score]))
    // The best hit's word score is among the lowest: its trigrams put it first.
    expect(wordScore.get(all[0]!.id)!).toBeLessThan(wordOnly[wordOnly.length / 2]!.score)
    // Ties: equal scores around the fifth place, in id order.
    const ties = rankText(documents, { words: [word('every')], phrases: [] }, null, 5)
    expect(ties.every((hit) => hit.score === ties[0]!.score)).toBe(true)
    expect(ties.map((hit) => hit.id)).toEqual([...ties.map((hit) => hit.id)].sort())
    expect(ids).not.toEqual([...ids].sort())
  })
})

describe("the resident index's full text, pruned against ranking everything", () => {
  it('gives the same best `limit` as ranking every match, over random documents of few letters (typed trigrams held often, ties, phrases, prefilters, words as often as by Zipf\'s law or not)', () => {
    let state = 5
    const random = () => (state = (state * 48271) % 2147483647) / 2147483647
    const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!
    const syllables = ['fe', 'ter', 'man', 'an', 'na', 'jo', 'hn']
    const nameOf = () => Array.from({ length: 1 + Math.floor(random() * 4) }, () => pick(syllables)).join('')
    const tokensOf = ['senate', 'bill', 'every', 'act', 'feterman', 'joan']
    // By Zipf's law, `senate` on 40% of the draws, `joan` on 7%: a query's rare words prune its common ones (`Pruning`).
    const zipf = tokensOf.flatMap((token, rank) => Array.from({ length: Math.round(60 / (rank + 1)) }, () => token))
    for (let corpus = 0; corpus < 60; corpus++) {
      const documents = new Documents(2)
      const drawn = corpus % 2 === 0 ? tokensOf : zipf
      for (let n = 0; n < 300; n++) {
        const tokens = Array.from({ length: 1 + Math.floor(random() * (corpus % 4 === 3 ? 24 : 8)) }, () => pick(drawn))
        // Names on most documents, or (by Zipf's law) on a few: only those without are pruned.
        const names = random() < (drawn === zipf ? 0.8 : 0.2) ? [] : Array.from({ length: 1 + Math.floor(random() * 3) }, nameOf)
        documents.put({ id: `e${String(Math.floor(random() * 1e6)).padStart(6, '0')}${n}`, fields: { type: random() < 0.3 ? 'rare' : 'common' }, tokens, names, vector: Float32Array.of(1, n) })
      }
      const prefilter = prefilterOf(documents, parseGffs('type:common', { allowFreeText: false }).qualifiers)
      for (let each = 0; each < 8; each++) {
        const words = Array.from({ length: Math.floor(random() * 3) }, () => queryWord(pick(tokensOf), Array.from({ length: Math.floor(random() * 3) }, nameOf)))
        const phrases = random() < 0.3 || words.length === 0 ? [[pick(tokensOf), pick(tokensOf)]] : []
        const query = { words, phrases }
        for (const filter of [null, prefilter]) {
          const all = rankText(documents, query, filter, 10_000)
          for (const limit of [1, 3, 10, 30, 100]) expect(rankText(documents, query, filter, limit), JSON.stringify({ corpus, query, limit })).toEqual(all.slice(0, limit))
        }
      }
    }
  })
})

describe("the resident index's full text, common words pruned", () => {
  // A rare word and a common one: 2,000 documents, 1,900 holding `every` in long titles (its BM25
  // small), 300 of them `senate` too; some of the others have names that repeat a typed name's
  // trigrams, which lift them above the rare word's. Such a query walks the common word's
  // postings for the rare word's slots and the named ones alone (`Pruning`): the best `limit` must
  // be those of ranking every match (a limit above the matches prunes nothing).
  let state = 11
  const random = () => (state = (state * 48271) % 2147483647) / 2147483647
  const documents = new Documents(2)
  for (let n = 0; n < 2_000; n++) {
    const rare = n % 20 < 6
    const common = rare || n % 10 !== 0 || random() < 0.5
    const fillers = Array.from({ length: (rare ? 12 : 6) + Math.floor(random() * 10) }, (_, at) => `filler${at}`)
    const tokens = [...(common ? ['every', ...fillers] : []), ...(rare ? ['senate', ...(random() < 0.1 ? ['senate'] : [])] : []), 'act']
    const named = n % 7 === 0 && !rare
    const names = named ? Array.from({ length: 1 + Math.floor(random() * 3) }, () => (random() < 0.5 ? 'feterman' : 'fettermann')) : []
    documents.put({ id: `e${String((n * 7919) % 2_000).padStart(4, '0')}`, fields: { type: random() < 0.4 ? 'rare' : 'common' }, tokens, names, vector: Float32Array.of(1, n) })
  }
  // Some removed, some put again (a new slot each): dead postings stay listed.
  for (let n = 0; n < 2_000; n += 97) documents.remove(`e${String(n).padStart(4, '0')}`)
  const queries: [string, TextQuery][] = [
    ['the rare word and the common one', { words: [queryWord('senate'), queryWord('every')], phrases: [] }],
    ['the common word first, with a typed name', { words: [queryWord('every', ['fetterman']), queryWord('senate', ['senate'])], phrases: [] }],
    ['a typo of the rare word beside the common one', { words: [queryWord('senat', [], 'senat'), queryWord('every', ['feterman'], 'every')], phrases: [] }],
    ['three words, one held by every document', { words: [queryWord('senate'), queryWord('every'), queryWord('act')], phrases: [] }],
  ]
  const prefilters = [null, ...['type:common', 'type:rare'].map((qualifier) => prefilterOf(documents, parseGffs(qualifier, { allowFreeText: false }).qualifiers))]

  it('finds the best `limit` that ranking every match finds, to the last bit of each score, with names lifted above the rare word', () => {
    for (const [name, query] of queries) {
      for (const filter of prefilters) {
        const all = rankText(documents, query, filter, 10_000)
        expect(all.length, name).toBeGreaterThan(500)
        for (const limit of [1, 3, 10, 30, 100, 150]) expect(rankText(documents, query, filter, limit), `${name}, best ${limit}`).toEqual(all.slice(0, limit))
      }
    }
    // Of the best 150, some hold the common word and names, not the rare word: what the pruned
    // steps must still score for the slots with names.
    const best = rankText(documents, queries[1]![1], null, 150)
    const withoutRare = best.filter((hit) => !documents.tokensOf(documents.slotOf(hit.id)!).includes('senate'))
    expect(withoutRare.length).toBeGreaterThan(0)
    expect(best.length - withoutRare.length).toBeGreaterThan(0)
  })
})

describe("the resident index's full text over windows of many slots", () => {
  // 40,000 people and bills: more slots than three of `addSteps`' windows. A given name is listed by
  // every step of its word (the token and the name, exact and near, its forms: `eliza` is one edit
  // from `elisa`, `elia` the stem of `elias`), so a slot is added to by several steps in each window;
  // its sum must be the reference's, whose words are scored in the query's order.
  let state = 3
  const random = () => (state = (state * 48271) % 2147483647) / 2147483647
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!
  const given = ['eliza', 'elisa', 'elias', 'elizabeth', 'liza', 'louise', 'mary']
  const syllables = ['dor', 'son', 'lo', 'nel', 'ka', 'rim', 'ax', 'pe']
  const words = ['budget', 'energy', 'water', 'tax', 'relief', 'farm', 'bank']
  const documents = new Documents(2)
  const entities: { id: string; type: string; tokens: string[]; names: string[] }[] = []
  for (let n = 0; n < 40_000; n++) {
    const person = random() < 0.7
    const name = person ? `${pick(given)} ${Array.from({ length: 2 + Math.floor(random() * 2) }, () => pick(syllables)).join('')}` : ''
    const title = Array.from({ length: (person ? 0 : 3) + Math.floor(random() * 3) }, () => pick(words)).join(' ')
    const entity = { id: `e${String((n * 7919) % 40_000).padStart(5, '0')}`, type: person ? 'person' : 'legislation', tokens: tokenize(`${title} ${name}`), names: nameWords(name) }
    entities.push(entity)
    documents.put({ id: entity.id, fields: { type: entity.type }, tokens: entity.tokens, names: entity.names, vector: Float32Array.of(1, n) })
  }
  const removed = new Set(entities.filter((_, n) => n % 89 === 0).map(({ id }) => id))
  for (const id of removed) documents.remove(id)
  const live = entities.filter(({ id }) => !removed.has(id))

  /** The best `limit` as `textScorer` ranks every live entity the prefilter keeps, with statistics over every live one. */
  function reference(query: TextQuery, type: string | null, limit: number): string[] {
    const score = textScorer(query, {
      tokens: fieldStatistics(live.map(({ tokens }) => tokens)),
      names: fieldStatistics(live.map(({ names }) => names)),
      trigrams: fieldStatistics(live.map(({ names }) => trigramsOf(names.join(' ')))),
      phraseHolders: [],
    })
    const hits = live.filter((entity) => type === null || entity.type === type).flatMap((entity) => score(entity) ?? [])
    return comparable(hits.sort(bestFirst).slice(0, limit))
  }
  const comparable = (hits: { id: string; score: number; matched: number }[]) => hits.map(({ id, score, matched }) => `${id} ${score.toFixed(9)} ${matched}`)
  const queries: [string, TextQuery][] = [
    ['a given name of many forms and a surname with a typo', { words: [queryWord('eliza', ['eliza', 'elizabeth', 'louisa', 'louise'], 'eliza'), queryWord('dorsoj', ['dorsoj'], 'dorsoj')], phrases: [] }],
    ['a given name alone', { words: [queryWord('elia', ['elias'], 'elias')], phrases: [] }],
    ['title words, one common', { words: [queryWord('budget', [], 'budget'), queryWord('tax', [], 'tax'), queryWord('energi', [], 'energy')], phrases: [] }],
  ]

  it('ranks as the reference scorer does, hits, order, scores and words matched, with and without a prefilter', () => {
    const prefilter = prefilterOf(documents, parseGffs('type:person', { allowFreeText: false }).qualifiers)
    for (const [name, query] of queries) {
      for (const limit of [10, 100]) {
        expect(comparable(rankText(documents, query, null, limit)), `${name}, best ${limit}`).toEqual(reference(query, null, limit))
        expect(comparable(rankText(documents, query, prefilter, limit)), `${name}, best ${limit}, people`).toEqual(reference(query, 'person', limit))
      }
    }
  })
})

describe("the resident index's full text over fields of any length", () => {
  // Each posting carries its field's length up to `LONG_FIELD` (255): entities of 1 to 600 tokens
  // and names, about that length and far past it, put one by one and loaded at once.
  let state = 11
  const random = () => (state = (state * 48271) % 2147483647) / 2147483647
  const lengths = [1, 2, 7, 253, 254, 255, 256, 300, 600]
  const entities = Array.from({ length: 360 }, (_, n) => {
    const length = lengths[n % lengths.length]!
    const tokens = Array.from({ length }, (_, at) => (at % 3 === 0 ? 'budget' : random() < 0.1 ? 'water' : `filler${at % 40}`))
    const names = n % 2 === 0 ? [] : Array.from({ length: Math.min(length, 280) }, (_, at) => (at === 0 ? 'eliza' : random() < 0.2 ? 'elisa' : `dor${at % 30}`))
    return { id: `e${String((n * 7919) % 360).padStart(3, '0')}`, tokens, names }
  })
  const put = new Documents(2)
  const loaded = Documents.forLoad(2)
  for (const [n, { id, tokens, names }] of entities.entries()) for (const documents of [put, loaded]) documents.put({ id, fields: { type: 'bill' }, tokens, names, vector: Float32Array.of(1, n) })
  loaded.loaded()
  const queries: TextQuery[] = [
    { words: [queryWord('budget', [], 'budget'), queryWord('water', [], 'water')], phrases: [] },
    { words: [queryWord('eliza', ['eliza'], 'eliza'), queryWord('dor7', ['dor7'], 'dor7')], phrases: [] },
  ]

  const statistics = {
    tokens: fieldStatistics(entities.map(({ tokens }) => tokens)),
    names: fieldStatistics(entities.map(({ names }) => names)),
    trigrams: fieldStatistics(entities.map(({ names }) => trigramsOf(names.join(' ')))),
    phraseHolders: [],
  }
  // The reference adds a slot's scores in its own order: the same to the ninth decimal.
  const comparable = (hits: { id: string; score: number; matched: number }[]) => hits.map(({ id, score, matched }) => `${id} ${score.toFixed(9)} ${matched}`)

  it('ranks as the reference scorer does, over postings put one by one and made at once, the two alike to the last bit', () => {
    for (const query of queries) {
      const score = textScorer(query, statistics)
      const expected = entities.flatMap((entity) => score(entity) ?? []).sort(bestFirst).slice(0, 100)
      expect(expected.length).toBeGreaterThan(50)
      const ranked = rankText(put, query, null, 100)
      expect(comparable(ranked)).toEqual(comparable(expected))
      expect(rankText(loaded, query, null, 100)).toEqual(ranked)
    }
  })
})

describe("the resident index's ranked value", () => {
  it('is the value at that rank of the values sorted best first, many of them equal or not', () => {
    let state = 3
    const random = () => (state = (state * 48271) % 2147483647) / 2147483647
    for (const length of [0, 1, 2, 3, 10, 100, 1000]) {
      for (const distinct of [1, 2, 5, 1e9]) {
        const values = Array.from({ length }, () => Math.floor(random() * distinct))
        const sorted = [...values].sort((a, b) => b - a)
        for (const rank of [0, 1, 2, 7, 50, length - 1, length, length + 1]) {
          expect(rankedValue(Float64Array.from(values), length, rank), `${rank} of ${length}`).toBe(rank >= 1 && rank <= length ? sorted[rank - 1] : -Infinity)
        }
      }
    }
  })
})
