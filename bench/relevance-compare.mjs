// Two saved runs of `search-relevance.mjs --save` compared query by query, as `--against` does, without
// running search again: for each engine both runs hold and each part the second run holds, the paired
// mean difference of nDCG@10 over all and by kind, and of the no-answer queries' result counts, with
// the paired bootstrap 95% interval and up / down / noise. For variants measured one after another
// (an experiment switched by the environment, a candidate list of relatives), each saved once.
// `node bench/relevance-compare.mjs BEFORE.json AFTER.json [--changed]` (`--changed`: the queries that moved).
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { KINDS, pairedDifference, PARTS, readRelevanceSet } from '../test/search/relevance.mjs'

const { values: options, positionals } = parseArgs({ allowPositionals: true, options: { changed: { type: 'boolean', default: false } } })
if (positionals.length !== 2) {
  console.error('usage: node bench/relevance-compare.mjs BEFORE.json AFTER.json [--changed]')
  process.exit(2)
}
const [before, after] = positionals.map((file) => JSON.parse(readFileSync(file, 'utf8')))
const queries = readRelevanceSet(after.set)
const answered = (query) => Object.keys(query.relevant).length > 0
const fixed = (value, digits = 3) => value.toFixed(digits)
const show = ({ mean, interval, verdict }) => (interval === null ? '-' : `${mean >= 0 ? '+' : ''}${fixed(mean)} (${fixed(interval[0], 2)}..${fixed(interval[1], 2)}) ${verdict}`)
const kinds = KINDS.filter((kind) => kind !== 'none' && queries.some((query) => query.kind === kind))
console.log(`| engine | part | nDCG@10 all | ${kinds.join(' | ')} | no answer: results |`)
console.log(`|---|---|---|${kinds.map(() => '---|').join('')}---|`)
const changed = []
for (const name of Object.keys(after.judged)) {
  if (before.judged[name] === undefined) continue
  for (const part of PARTS) {
    const asked = queries.filter((query) => query.part === part && after.judged[name][query.q] !== undefined && before.judged[name][query.q] !== undefined)
    if (asked.length === 0) continue
    const compared = (kind) => {
      const chosen = asked.filter((query) => (kind === 'none' ? !answered(query) : answered(query) && (kind === 'all' || query.kind === kind)))
      const key = kind === 'none' ? 'results' : 'ndcg10'
      return pairedDifference(chosen.map((query) => before.judged[name][query.q][key]), chosen.map((query) => after.judged[name][query.q][key]))
    }
    console.log(`| ${name} | ${part} | ${['all', ...kinds, 'none'].map((kind) => show(compared(kind))).join(' | ')} |`)
    for (const query of asked) {
      const key = answered(query) ? 'ndcg10' : 'results'
      const [was, is] = [before.judged[name][query.q][key], after.judged[name][query.q][key]]
      if (Math.abs(is - was) > 1e-9) changed.push(`${name}, ${part}: ${query.q} ${fixed(was, 2)} to ${fixed(is, 2)}${key === 'results' ? ' results' : ''}`)
    }
  }
}
if (options.changed) console.log(`\n${changed.length === 0 ? 'no query moved' : changed.join('\n')}`)
