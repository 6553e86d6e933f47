import { describe, expect, it } from 'vitest'
import { loadWordRelatives } from '../../src/node/word-relatives.js'
import { tokenize } from '../../src/search/text.js'
import { parseWordRelatives, relativesOf } from '../../src/search/word-relatives.js'

const tokensOf = (words: { token: string }[]) => words.map((word) => word.token)

describe('words\' WordNet relatives', () => {
  const relatives = parseWordRelatives(['and\t', 'chief\thead leader', 'command in chief\tgeneralissimo', 'spi\tintellig agent', 'tower\tstructur'].join('\n'))

  it('finds a key by halves of the sorted text: its relatives, none for a function word, undefined for no key', () => {
    expect(relatives.of('spi')).toEqual(['intellig', 'agent'])
    expect(relatives.of('and')).toEqual([])
    expect(relatives.of('eiffel')).toBeUndefined()
    expect(relatives.of('zzz')).toBeUndefined()
  })

  it('takes the longest collocation typed before its words, and expands nothing when a word is no common word (a name)', () => {
    expect(tokensOf(relativesOf(tokenize('commander in chief'), relatives))).toEqual(['generalissimo'])
    expect(tokensOf(relativesOf(tokenize('spies and chief'), relatives))).toEqual(['intellig', 'agent', 'head', 'leader'])
    expect(relativesOf(tokenize('Eiffel Tower'), relatives)).toEqual([])
    // Matched as tokens, never as names: a name's relatives would be other names.
    expect(relativesOf(tokenize('spies'), relatives)[0]!.names).toEqual([])
  })

  it('ships WordNet\'s synonyms and hypernyms of common words, and no proper names', async () => {
    const shipped = await loadWordRelatives()
    expect(shipped.of('militari')).toEqual(expect.arrayContaining(['arm', 'servic']))
    expect(shipped.of('spi')).toEqual(expect.arrayContaining(['intellig']))
    expect(shipped.of('eiffel')).toBeUndefined()
    expect(shipped.of('of')).toEqual([])
  })
})
