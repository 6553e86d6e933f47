/** Which index a list's filter seeks, and what is left to check row by row. */
import { describe, expect, it } from 'vitest'
import { parseGffs } from '../../src/gffs/parse.js'
import type { Qualifier } from '../../src/gffs/types.js'
import { planFilter } from '../../src/kysely/filter-plan.js'

const qualifiersOf = (filter: string) => parseGffs(filter, { allowFreeText: false }).qualifiers
const fieldsOf = (qualifiers: Qualifier[]) => qualifiers.map((qualifier) => qualifier.field)

describe('planFilter', () => {
  it('seeks type and jurisdiction together where both are asked equal to one value', () => {
    const plan = planFilter(qualifiersOf('status:current jurisdiction:US-WA type:person'), 10_000)
    expect(fieldsOf(plan.seek)).toEqual(['type', 'jurisdiction'])
    expect(fieldsOf(plan.residual)).toEqual(['status'])
  })

  it('otherwise seeks the one field of the fewest rows a value', () => {
    expect(fieldsOf(planFilter(qualifiersOf('type:person status:current'), 10_000).seek)).toEqual(['status'])
    expect(fieldsOf(planFilter(qualifiersOf('type:bill authority:congress localType:HR'), 10_000).seek)).toEqual(['localType'])
    expect(fieldsOf(planFilter(qualifiersOf('type:person'), 10_000).seek)).toEqual(['type'])
  })

  it('never seeks a negated, many-valued or non-equal qualifier, nor a field without an index', () => {
    for (const filter of ['-type:person', 'type:person,bill', 'name:Ada', 'displayDate:2020..2021', 'title:~tax']) {
      const plan = planFilter(qualifiersOf(filter), 10_000)
      expect(plan.seek, filter).toEqual([])
      expect(plan.residual, filter).toHaveLength(1)
    }
    // The pair needs both: a negated jurisdiction leaves type alone to seek.
    expect(fieldsOf(planFilter(qualifiersOf('type:person -jurisdiction:US-WA'), 10_000).seek)).toEqual(['type'])
  })
})
