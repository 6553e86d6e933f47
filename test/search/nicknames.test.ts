import { describe, expect, it } from 'vitest'
import { loadNicknames } from '../../src/node/nicknames.js'
import { withNicknames } from '../../src/search/nicknames.js'

describe('nicknames', async () => {
  const nicknames = await loadNicknames()

  it('leads a nickname to its formal names and a formal name to its nicknames, from the shipped list', () => {
    expect(nicknames.get('joe')).toContain('joseph')
    expect(nicknames.get('joseph')).toContain('joe')
    expect(nicknames.get('bill')).toEqual(expect.arrayContaining(['william', 'robert']))
    // Two nicknames of one name are not each other's.
    expect(nicknames.get('bill')).not.toContain('bob')
  })

  it('takes a word for a given name only when another word follows it', () => {
    expect(withNicknames(['joe', 'biden'], nicknames)[0]).toContain('joseph')
    expect(withNicknames(['joe', 'biden'], nicknames)[1]).toEqual(['biden'])
    expect(withNicknames(['tax', 'bill'], nicknames)[1]).toEqual(['bill'])
    expect(withNicknames(['dick'], nicknames)).toEqual([['dick']])
  })
})
