import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { GffsError, parseGffs } from '../../src/gffs/index.js'

const filter = (input: string) => parseGffs(input, { allowFreeText: false })
const search = (input: string) => parseGffs(input, { allowFreeText: true })

function errorOf(run: () => unknown): GffsError {
  try {
    run()
  } catch (error) {
    if (error instanceof GffsError) return error
    throw error
  }
  throw new Error('expected a GffsError')
}

describe('GFFS parser', () => {
  it('parses every operator', () => {
    expect(filter('type:person,committee title:~tax,"health care" displayDate:>=2020 status:<b name:>a authority:<=z localType:>x').qualifiers).toEqual([
      { kind: 'qualifier', field: 'type', negated: false, op: 'eq', values: ['person', 'committee'] },
      { kind: 'qualifier', field: 'title', negated: false, op: 'contains', values: ['tax', 'health care'] },
      { kind: 'qualifier', field: 'displayDate', negated: false, op: 'gte', value: '2020' },
      { kind: 'qualifier', field: 'status', negated: false, op: 'lt', value: 'b' },
      { kind: 'qualifier', field: 'name', negated: false, op: 'gt', value: 'a' },
      { kind: 'qualifier', field: 'authority', negated: false, op: 'lte', value: 'z' },
      { kind: 'qualifier', field: 'localType', negated: false, op: 'gt', value: 'x' },
    ])
  })

  it('parses ranges with open ends and a quoted literal star', () => {
    expect(filter('displayDate:2020..2021-06 -displayDate:*..1900 name:"*"..*').qualifiers).toEqual([
      { kind: 'qualifier', field: 'displayDate', negated: false, op: 'range', from: '2020', to: '2021-06' },
      { kind: 'qualifier', field: 'displayDate', negated: true, op: 'range', from: null, to: '1900' },
      { kind: 'qualifier', field: 'name', negated: false, op: 'range', from: '*', to: null },
    ])
  })

  it('unescapes quoted values and keeps spaces, commas and colons inside quotes', () => {
    expect(filter('title:"say \\"hi\\", then: go \\\\ home"').qualifiers[0]).toMatchObject({ op: 'eq', values: ['say "hi", then: go \\ home'] })
  })

  it('takes words, phrases and exclusions as free text in search only', () => {
    expect(search('health "public option" -tax type:legislation')).toEqual({
      qualifiers: [{ kind: 'qualifier', field: 'type', negated: false, op: 'eq', values: ['legislation'] }],
      text: [
        { kind: 'word', negated: false, text: 'health' },
        { kind: 'phrase', negated: false, text: 'public option' },
        { kind: 'word', negated: true, text: 'tax' },
      ],
    })
    const error = errorOf(() => filter('type:person "public option"'))
    expect(error).toMatchObject({ code: 'free_text_not_allowed', term: '"public option"', position: 12 })
  })

  it.each([
    ['party:x', 'unsupported_field'],
    ['Type:person', 'unsupported_field'],
    ['attributes.title:x', 'nested_field_path'],
    ['texts[0]:x', 'nested_field_path'],
    ['type:', 'invalid_filter'],
    [':x', 'invalid_filter'],
    ['-', 'invalid_filter'],
    ['type:a,,b', 'invalid_filter'],
    ['type:a,', 'invalid_filter'],
    ['title:"open', 'invalid_filter'],
    ['title:"a"b', 'invalid_filter'],
    ['title:a"b"', 'invalid_filter'],
    ['displayDate:>a,b', 'invalid_filter'],
    ['displayDate:2020..', 'invalid_filter'],
    ['displayDate:..2020', 'invalid_filter'],
    ['title:"bad \\escape"', 'invalid_filter'],
  ])('rejects %s as %s', (input, code) => {
    expect(errorOf(() => filter(input)).code).toBe(code)
  })

  it('enforces the limits: 1,000 characters, 32 terms, 50 values', () => {
    expect(errorOf(() => filter(`title:${'x'.repeat(1000)}`)).code).toBe('invalid_filter')
    expect(() => filter(Array.from({ length: 32 }, () => 'type:a').join(' '))).not.toThrow()
    expect(errorOf(() => filter(Array.from({ length: 33 }, () => 'type:a').join(' '))).term).toBe('type:a')
    expect(() => filter(`type:${Array.from({ length: 50 }, (_, i) => `v${i}`).join(',')}`)).not.toThrow()
    expect(errorOf(() => filter(`type:${Array.from({ length: 51 }, (_, i) => `v${i}`).join(',')}`)).code).toBe('invalid_filter')
  })

  it('throws nothing but GffsError, whatever the input', () => {
    const alphabet = fc.constantFrom(...'tye:pnamTitle~><=.,"\\- *[]x0é\t'.split(''))
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: alphabet, maxLength: 60 }), fc.string({ maxLength: 60 }), fc.string({ unit: 'binary', maxLength: 40 })), fc.boolean(), (input, allowFreeText) => {
        try {
          parseGffs(input, { allowFreeText })
        } catch (error) {
          if (!(error instanceof GffsError)) throw error
          expect(error.position).toBeGreaterThanOrEqual(0)
          expect(error.message).toBeTruthy()
        }
      }),
      { numRuns: 5000 },
    )
  })
})
