import type { EqualsQualifier } from '../gffs/types.js'
import type { QueryWord } from '../ports/search-index.js'
import type { Nicknames } from './nicknames.js'
import { queryWord, tokenize } from './text.js'

/**
 * The US states, the District of Columbia and the five inhabited territories: the data's
 * jurisdiction code (`US-` and the USPS code), the name, and the other names people call it by.
 * Codes and names: USPS Publication 28, appendix B (state and possession abbreviations). Nicknames:
 * each state's official or best-known ones, and demonyms, as listed in Wikipedia's "List of U.S.
 * state and territory nicknames" and "List of demonyms for U.S. states and territories" (written
 * out by hand, 2026-11-29). Only nicknames that name the state without its ordinary words alone
 * (`Garden State`, never `garden`): a common word (`natural`, `golden`, `volunteer`) is a place
 * only in its nickname's phrase.
 */
const PLACES: readonly (readonly [code: string, name: string, otherNames: string])[] = [
  ['AL', 'Alabama', 'Yellowhammer State, Heart of Dixie, Cotton State, Alabamian, Alabaman'],
  ['AK', 'Alaska', 'Last Frontier, Alaskan'],
  ['AZ', 'Arizona', 'Grand Canyon State, Arizonan'],
  ['AR', 'Arkansas', 'Natural State, Arkansan'],
  ['CA', 'California', 'Golden State, Californian'],
  ['CO', 'Colorado', 'Centennial State, Coloradan'],
  ['CT', 'Connecticut', 'Constitution State, Nutmeg State, Nutmegger'],
  ['DE', 'Delaware', 'First State, Diamond State, Delawarean'],
  ['FL', 'Florida', 'Sunshine State, Floridian'],
  ['GA', 'Georgia', 'Peach State, Georgian'],
  ['HI', 'Hawaii', 'Aloha State, Hawaiian'],
  ['ID', 'Idaho', 'Gem State, Idahoan'],
  ['IL', 'Illinois', 'Prairie State, Land of Lincoln, Illinoisan'],
  ['IN', 'Indiana', 'Hoosier State, Hoosier, Indianan'],
  ['IA', 'Iowa', 'Hawkeye State, Hawkeye, Iowan'],
  ['KS', 'Kansas', 'Sunflower State, Kansan'],
  ['KY', 'Kentucky', 'Bluegrass State, Kentuckian'],
  ['LA', 'Louisiana', 'Pelican State, Louisianan, Louisianian'],
  ['ME', 'Maine', 'Pine Tree State, Mainer'],
  ['MD', 'Maryland', 'Old Line State, Free State, Marylander'],
  ['MA', 'Massachusetts', 'Bay State, Commonwealth of Massachusetts, Bay Stater'],
  ['MI', 'Michigan', 'Great Lakes State, Wolverine State, Michigander, Michiganian'],
  ['MN', 'Minnesota', 'North Star State, Gopher State, Land of 10,000 Lakes, Minnesotan'],
  ['MS', 'Mississippi', 'Magnolia State, Mississippian'],
  ['MO', 'Missouri', 'Show-Me State, Show Me State, Missourian'],
  ['MT', 'Montana', 'Treasure State, Big Sky Country, Montanan'],
  ['NE', 'Nebraska', 'Cornhusker State, Cornhusker, Nebraskan'],
  ['NV', 'Nevada', 'Silver State, Nevadan'],
  ['NH', 'New Hampshire', 'Granite State, Granite Stater, New Hampshirite'],
  ['NJ', 'New Jersey', 'Garden State, New Jerseyan'],
  ['NM', 'New Mexico', 'Land of Enchantment, New Mexican'],
  ['NY', 'New York', 'Empire State, New Yorker'],
  ['NC', 'North Carolina', 'Tar Heel State, Tar Heel, North Carolinian'],
  ['ND', 'North Dakota', 'Peace Garden State, Roughrider State, North Dakotan'],
  ['OH', 'Ohio', 'Buckeye State, Buckeye, Ohioan'],
  ['OK', 'Oklahoma', 'Sooner State, Sooner, Oklahoman'],
  ['OR', 'Oregon', 'Beaver State, Oregonian'],
  ['PA', 'Pennsylvania', 'Keystone State, Commonwealth of Pennsylvania, Pennsylvanian'],
  ['RI', 'Rhode Island', 'Ocean State, Rhode Islander'],
  ['SC', 'South Carolina', 'Palmetto State, South Carolinian'],
  ['SD', 'South Dakota', 'Mount Rushmore State, South Dakotan'],
  ['TN', 'Tennessee', 'Volunteer State, Tennessean'],
  ['TX', 'Texas', 'Lone Star State, Texan'],
  ['UT', 'Utah', 'Beehive State, Utahn'],
  ['VT', 'Vermont', 'Green Mountain State, Vermonter'],
  ['VA', 'Virginia', 'Old Dominion, Commonwealth of Virginia, Virginian'],
  ['WA', 'Washington', 'Evergreen State, Washington State, Washingtonian'],
  ['WV', 'West Virginia', 'Mountain State, West Virginian'],
  ['WI', 'Wisconsin', 'Badger State, Badger, Wisconsinite'],
  ['WY', 'Wyoming', 'Equality State, Cowboy State, Wyomingite'],
  ['DC', 'District of Columbia', 'Washington DC, Washington D C, D C'],
  ['AS', 'American Samoa', 'Samoa, American Samoan'],
  ['GU', 'Guam', 'Guamanian'],
  ['MP', 'Northern Mariana Islands', 'Northern Marianas, Mariana Islands, CNMI'],
  ['PR', 'Puerto Rico', 'Puerto Rican'],
  ['VI', 'U.S. Virgin Islands', 'Virgin Islands, US Virgin Islands, USVI'],
]

/**
 * What a person's role is called, to the word of the data's titles (`Senator for Ohio`,
 * `Representative for Ohio, district 4`): the delegates and the resident commissioner of the
 * territories and the District are Representatives in the data.
 */
const ROLES: readonly (readonly [title: string, words: string])[] = [
  ['Senator', 'senator, senators, senate, sen'],
  ['Representative', 'representative, representatives, rep, reps, congressman, congressmen, congresswoman, congresswomen, congressperson, congresspeople, house, delegate, delegates, resident commissioner, district'],
]

/** Ordinals as words, for a district (`Utah's third district`); numerals (`3rd`) are read as written. */
const ORDINALS = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth', 'tenth', 'eleventh', 'twelfth']

/** Lowercase words of letters and digits, as the gazetteer's phrases are matched. */
function wordsOf(text: string): string[] {
  return Array.from(text.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu), ([word]) => word)
}

interface Phrase {
  words: string[]
  code: string
}

/** Every name of every place, longest first (`West Virginia` before `Virginia`), a demonym also plural. */
const PLACE_PHRASES: Phrase[] = PLACES.flatMap(([code, name, others]) => {
  const names = [name, ...others.split(', ')].map(wordsOf)
  const plurals = names.filter((words) => words.length <= 2 && !/s$/.test(words.at(-1)!)).map((words) => [...words.slice(0, -1), `${words.at(-1)}s`])
  return [...names, ...plurals].map((words) => ({ words, code: `US-${code}` }))
}).sort((a, b) => b.words.length - a.words.length)

const ROLE_PHRASES = ROLES.flatMap(([title, words]) => words.split(', ').map((phrase) => ({ words: wordsOf(phrase), title }))).sort((a, b) => b.words.length - a.words.length)

/** The data's names of the places, by code: the words each of their people's titles holds. */
const PLACE_NAMES = new Map(PLACES.map(([code, name]) => [`US-${code}`, name]))

/** Two capital letters typed as a word, beside a role word: a postal code (`TX senator`); in lowercase they are words (`in`, `me`, `or`). */
const POSTAL_CODES = new Set(PLACES.map(([code]) => code))

/** What a query says of place and role: the jurisdictions it names, and the titles and district it asks for. */
export interface PlaceAndRole {
  /** The data's jurisdiction codes (`US-OH`). */
  jurisdictions: string[]
  /** The titles' words the query's role words stand for (`Senator`, `Representative`). */
  titles: string[]
  /** A district's number, from an ordinal (`4th`, `fourth`). */
  district?: number
}

/**
 * The places a query names, by name, nickname or demonym (`Buckeye State senators`, `Hoosiers`), or
 * by postal code in capitals beside a role word (`TX senator`), and the role and district it asks
 * for; null when it names no place (a role alone, `congressman`, says nothing of whom). A place's
 * name right after a given name (a name of `givenNames`) is a surname: `George Washington` names a
 * person, not the state.
 */
export function placeAndRoleOf(text: string, givenNames: Nicknames = new Map()): PlaceAndRole | null {
  const jurisdictions = new Set<string>()
  const words = wordsOf(text)
  const titles = new Set<string>()
  let district: number | undefined
  for (let start = 0; start < words.length; start++) {
    const place = PLACE_PHRASES.find((phrase) => phrase.words.every((word, offset) => words[start + offset] === word))
    if (place !== undefined && !(start > 0 && givenNames.has(words[start - 1]!))) {
      jurisdictions.add(place.code)
      start += place.words.length - 1
      continue
    }
    const role = ROLE_PHRASES.find((phrase) => phrase.words.every((word, offset) => words[start + offset] === word))
    if (role !== undefined) titles.add(role.title)
    const word = words[start]!
    const ordinal = /^([0-9]{1,2})(st|nd|rd|th)$/.exec(word)?.[1] ?? (ORDINALS.includes(word) ? String(ORDINALS.indexOf(word) + 1) : undefined)
    if (ordinal !== undefined) district = Number(ordinal)
  }
  // A postal code only beside a role word: two capitals are an acronym as often (`VA hospitals`, `PA system`).
  if (titles.size > 0) for (const [word] of text.matchAll(/\b[A-Z]{2}\b/g)) if (POSTAL_CODES.has(word)) jurisdictions.add(`US-${word}`)
  if (jurisdictions.size === 0) return null
  return { jurisdictions: [...jurisdictions], titles: [...titles], ...(district === undefined ? {} : { district }) }
}

/**
 * Full text for the people of the places a query names, under a prefilter on their jurisdiction: the
 * words of the data's titles for the role asked for (`Senator`; `Representative`, and `district 4`
 * for a district: its member holds them all), or where none is asked, the place's name, which all
 * its people's titles hold (`Senator for Ohio`, `Representative for Ohio, district 4`).
 */
export function placeQueryOf(found: PlaceAndRole): { words: QueryWord[]; jurisdiction: EqualsQualifier } {
  const role = [...found.titles, ...(found.district === undefined ? [] : ['district', String(found.district)])]
  const text = (role.length > 0 ? role : found.jurisdictions.map((code) => PLACE_NAMES.get(code)!)).join(' ')
  const tokens = [...new Set(tokenize(text))]
  return {
    words: tokens.map((token) => queryWord(token)),
    jurisdiction: { kind: 'qualifier', field: 'jurisdiction', negated: false, op: 'eq', values: found.jurisdictions },
  }
}
