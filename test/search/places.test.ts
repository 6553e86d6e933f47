import { describe, expect, it } from 'vitest'
import { placeAndRoleOf, placeQueryOf } from '../../src/search/places.js'

describe('places and roles in a query', () => {
  it('reads a state by its name, nickname or demonym, and the role asked for', () => {
    expect(placeAndRoleOf('Buckeye State senators')).toEqual({ jurisdictions: ['US-OH'], titles: ['Senator'] })
    expect(placeAndRoleOf('the senators from Ohio')).toEqual({ jurisdictions: ['US-OH'], titles: ['Senator'] })
    expect(placeAndRoleOf('Hoosiers')).toEqual({ jurisdictions: ['US-IN'], titles: [] })
    expect(placeAndRoleOf('Show-Me State')).toEqual({ jurisdictions: ['US-MO'], titles: [] })
    expect(placeAndRoleOf("Wyoming's congresswoman")).toEqual({ jurisdictions: ['US-WY'], titles: ['Representative'] })
    expect(placeAndRoleOf('DC delegate')).toEqual({ jurisdictions: ['US-DC'], titles: ['Representative'] })
    expect(placeAndRoleOf("Puerto Rico's resident commissioner")).toEqual({ jurisdictions: ['US-PR'], titles: ['Representative'] })
  })

  it('takes the longest name first, and a district by its ordinal', () => {
    expect(placeAndRoleOf('West Virginia senators')?.jurisdictions).toEqual(['US-WV'])
    expect(placeAndRoleOf('Green Mountain State')?.jurisdictions).toEqual(['US-VT'])
    expect(placeAndRoleOf('District of Columbia')).toEqual({ jurisdictions: ['US-DC'], titles: [] })
    expect(placeAndRoleOf("Kentucky's 4th district")).toEqual({ jurisdictions: ['US-KY'], titles: ['Representative'], district: 4 })
    expect(placeAndRoleOf("Utah's third district congressman")).toEqual({ jurisdictions: ['US-UT'], titles: ['Representative'], district: 3 })
  })

  it('reads a postal code only in capitals beside a role word, and a nickname\'s common word only in its phrase', () => {
    expect(placeAndRoleOf('TX senator')?.jurisdictions).toEqual(['US-TX'])
    expect(placeAndRoleOf('GI benefits and VA hospitals')).toBeNull()
    expect(placeAndRoleOf('senators in the house')).toBeNull()
    expect(placeAndRoleOf('natural resources')).toBeNull()
    expect(placeAndRoleOf('golden gate')).toBeNull()
    expect(placeAndRoleOf('congressman')).toBeNull()
    expect(placeAndRoleOf('commander in chief')).toBeNull()
  })

  it('takes a place\'s name right after a given name for a surname, not the place', () => {
    const givenNames = new Map([['george', ['georgie']], ['martha', ['patty']]])
    expect(placeAndRoleOf('George Washington', givenNames)).toBeNull()
    expect(placeAndRoleOf('martha washington senator', givenNames)).toBeNull()
    // Without the given names, or where no given name comes before it, it is the state.
    expect(placeAndRoleOf('George Washington')?.jurisdictions).toEqual(['US-WA'])
    expect(placeAndRoleOf('Washington senators', givenNames)?.jurisdictions).toEqual(['US-WA'])
    expect(placeAndRoleOf('senators from Washington and George Ohio', givenNames)?.jurisdictions).toEqual(['US-WA'])
  })

  it('searches the role\'s title words, or the place\'s name when no role is asked, under the jurisdiction', () => {
    const senators = placeQueryOf({ jurisdictions: ['US-OH'], titles: ['Senator'] })
    expect(senators.words.map((word) => word.token)).toEqual(['senat'])
    expect(senators.words[0]!.names).toEqual([])
    expect(senators.jurisdiction).toMatchObject({ field: 'jurisdiction', op: 'eq', values: ['US-OH'], negated: false })
    expect(placeQueryOf({ jurisdictions: ['US-KY'], titles: ['Representative'], district: 4 }).words.map((word) => word.token)).toEqual(['repres', 'district', '4'])
    expect(placeQueryOf({ jurisdictions: ['US-NH'], titles: [] }).words.map((word) => word.token)).toEqual(['new', 'hampshir'])
  })
})
