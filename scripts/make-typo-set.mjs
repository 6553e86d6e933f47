// Writes test/search/relevance-set-4.json: every person of the demo data whose surname has six
// letters or more, asked for by that surname with one typo, made by a seeded generator, not by hand:
// a letter replaced, left out, doubled in (inserted) or swapped with the next one, anywhere but the
// first letter (people rarely miss it). Every person of that surname is what the query asks for
// (grade 2). Nothing in it is chosen by looking at results: the set is held out whole.
// `node scripts/make-typo-set.mjs` (the same file every time).
import { readFileSync, writeFileSync } from 'node:fs'
import { seededRandom } from '../test/search/relevance.mjs'

const LETTERS = 'abcdefghijklmnopqrstuvwxyz'
const random = seededRandom(20261129)
const pick = (list) => list[Math.floor(random() * list.length)]

/** `word` with one typo of a kind drawn at random, at a position drawn at random (never the first letter). */
function withTypo(word) {
  const at = 1 + Math.floor(random() * (word.length - 2))
  const kind = pick(['replace', 'leave out', 'insert', 'swap'])
  if (kind === 'replace') return word.slice(0, at) + pick([...LETTERS].filter((letter) => letter !== word[at].toLowerCase())) + word.slice(at + 1)
  if (kind === 'insert') return word.slice(0, at) + pick([...LETTERS]) + word.slice(at)
  if (kind === 'swap' && word[at] !== word[at + 1]) return word.slice(0, at) + word[at + 1] + word[at] + word.slice(at + 2)
  return word.slice(0, at) + word.slice(at + 1)
}

const entities = readFileSync(new URL('../demo/entities.jsonl', import.meta.url), 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => JSON.parse(line))
const persons = entities.filter((entity) => entity.type === 'person')
const surnameOf = (person) => person.name.split(' ').at(-1)
const queries = []
for (const person of persons) {
  const surname = surnameOf(person)
  if (!/^[A-Za-z]{6,}$/.test(surname)) continue
  const typed = withTypo(surname)
  if (typed.toLowerCase() === surname.toLowerCase()) continue
  const namesakes = persons.filter((other) => surnameOf(other).toLowerCase() === surname.toLowerCase())
  queries.push({ q: typed, kind: 'names', relevant: Object.fromEntries(namesakes.map((other) => [other.id, 2])) })
}
const about =
  'Typos of surnames (issue 42): every person of demo/entities.jsonl whose surname has six letters or more, with one typo made by scripts/make-typo-set.mjs (seeded: a letter replaced, left out, inserted or swapped with the next, never the first); every person of that surname graded 2. Generated, never tuned on: held out whole.'
writeFileSync(new URL('../test/search/relevance-set-4.json', import.meta.url), `${JSON.stringify({ about, queries }, null, 1)}\n`)
console.log(`${queries.length} queries written to test/search/relevance-set-4.json`)
