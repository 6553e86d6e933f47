import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { bestBySum, type ClauseRanking, unscoredIn } from '../../src/lancedb/clause-sums.js'
import { createLancedbSearchIndex } from '../../src/lancedb/index.js'
import type { IndexedEntity, TextQuery } from '../../src/ports/search-index.js'
import { queryWord } from '../../src/search/text.js'

const idsOf = (hits: readonly { id: string }[]) => hits.map((hit) => hit.id)
const ranking = (scores: Record<string, number>, cutAt: number | null): ClauseRanking => ({ scores: new Map(Object.entries(scores)), cutAt })

describe('the sum of clauses from each clause\'s best rows', () => {
  it('asks a clause that left rows out for the candidates it did not return, and a complete one for none', () => {
    const cut = ranking({ a: 3, b: 2 }, 2)
    const complete = ranking({ c: 1 }, null)
    expect(unscoredIn(cut, ['a', 'b', 'c', 'd'])).toEqual(['c', 'd'])
    expect(unscoredIn(complete, ['a', 'b', 'c', 'd'])).toEqual([])
  })

  it('ranks candidates by the sum of their scores, and answers when every clause returned all it matches', () => {
    expect(bestBySum([ranking({ a: 1, b: 2 }, null), ranking({ a: 1.5, c: 0.1 }, null)], 2)).toEqual([
      { id: 'a', score: 2.5 },
      { id: 'b', score: 2 },
    ])
  })

  it('puts tied rows in id order, whichever clause found them first', () => {
    const best = bestBySum([ranking({ c: 1, b: 2 }, null), ranking({ a: 2, d: 1.5 }, null)], 4)
    expect(best!.map(({ id }) => id)).toEqual(['a', 'b', 'd', 'c'])
  })

  it('answers when the last of the best reaches what a row no clause returned could score, and refuses when it does not', () => {
    // Rows left out score at most 2 in the first clause and 1 in the second: 3 in all.
    const scored = () => [ranking({ a: 4, b: 2, c: 2 }, 2), ranking({ a: 1, b: 1, c: 0.5 }, 1)]
    expect(bestBySum(scored(), 2)).toEqual([
      { id: 'a', score: 5 },
      { id: 'b', score: 3 },
    ])
    expect(bestBySum(scored(), 3)).toBeNull() // c's 2.5 is below 3
    // Fewer candidates than asked while a clause left rows out: the rows left out would fill the list.
    expect(bestBySum([ranking({ a: 4 }, 2)], 2)).toBeNull()
  })
})

describe('LanceDB full text by any of the words', () => {
  it('gives the best rows of a full ranking for every limit, whichever way it finds them', { timeout: 120_000 }, async () => {
    // Words, their near forms (within one typo) and names, drawn at random, so that the clauses of a
    // query (words, near words, names, trigrams) rank different rows first and leave rows out at
    // small limits: a row's sum must then be completed, or the full query asked.
    const words = ['garden', 'harden', 'warden', 'budget', 'budgets', 'school', 'schools', 'relief', 'tax', 'farm', 'forest']
    const names = ['garden', 'gardner', 'smith', 'smyth', 'harden', 'schooler', 'budd']
    let seed = 3
    const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647
    const draw = <T>(items: readonly T[], count: number) => Array.from({ length: count }, () => items[Math.floor(random() * items.length)]!)
    const entities: IndexedEntity[] = Array.from({ length: 400 }, (_, n) => ({
      id: `e${n}`,
      fields: { type: n % 2 === 0 ? 'legislation' : 'person' },
      tokens: draw(words, 1 + Math.floor(random() * 6)),
      names: random() < 0.4 ? draw(names, 1 + Math.floor(random() * 2)) : [],
      vector: Float32Array.from([random(), random(), random(), random()]),
      created: true,
    }))
    const directory = await mkdtemp(join(tmpdir(), 'er-lancedb-sums-'))
    const index = await createLancedbSearchIndex({ uri: directory, dimensions: 4 })
    try {
      // In several steps, as the indexer writes: several fragments, which LanceDB reads on several threads.
      for (let start = 0; start < entities.length; start += 50) {
        await index.apply({ upserts: entities.slice(start, start + 50), removals: [], state: { cursor: String(start), embedderId: 'test' } })
      }
      const queryOf = (text: string): TextQuery => ({ words: text.split(' ').map((token) => queryWord(token, [token])), phrases: [] })
      const type = [{ kind: 'qualifier' as const, field: 'type' as const, negated: false, op: 'eq' as const, values: ['legislation'] }]
      // First with rows that the full-text indexes do not hold yet (LanceDB scans them), then with every row in them.
      for (const indexed of [false, true]) {
        if (indexed) await index.optimize()
        // Each query holds a word that only names hold: no row holds every word as typed, which would
        // answer first (and alone, when `limit` rows do).
        for (const text of ['garden smith', 'budget budd', 'harden smith', 'school relief gardner', 'smyth budgets', 'gardner tax']) {
          for (const qualifiers of [[], type]) {
            const full = await index.fullText(queryOf(text), qualifiers, 1000)
            expect(full.length, text).toBeLessThan(1000) // nothing left out: every clause complete
            // The same order every time, ties included (search fuses ranks).
            for (let again = 0; again < 5; again++) expect(idsOf(await index.fullText(queryOf(text), qualifiers, 1000)), text).toEqual(idsOf(full))
            const scoreOf = new Map(full.map((hit) => [hit.id, hit.score]))
            for (const limit of [1, 3, 5, 10, 40]) {
              const best = await index.fullText(queryOf(text), qualifiers, limit)
              const context = `${text} ${qualifiers.length} limit ${limit}${indexed ? '' : ', rows not indexed'}`
              // Rows that hold only some trigrams of a name are dropped after the ranking, so a page may
              // hold fewer than `limit`. Ties may come in any order: the scores, and each row's own
              // score, are what must agree.
              expect(best.length, context).toBeGreaterThan(Math.min(limit, full.length) / 2)
              expect(best.map((hit) => hit.score), context).toEqual(full.slice(0, best.length).map((hit) => expect.closeTo(hit.score, 5)))
              for (const hit of best) expect(hit.score, context).toBeCloseTo(scoreOf.get(hit.id)!, 5)
            }
          }
        }
      }
    } finally {
      await index.close()
      await rm(directory, { recursive: true, force: true })
    }
  })
})
