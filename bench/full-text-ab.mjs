// Full text at 1,000,000 entities, two builds side by side: the LanceDB index's `fullText` (both
// sides, entities and passages, as search asks for it) of each build over the same index
// (bench/.data/search-1m-texts, which `search-scale.mjs --texts 100000` builds), query by query
// interleaved, under the prefilter of search-scale.mjs and without one. Three sets of 30 queries: a
// title word beside a word found only in texts, two words found only in texts, and two title words
// beside a text word. p50 of two runs of each query by each build.
//   node bench/full-text-ab.mjs BASELINE_DIR [DIR]   (each a checkout with its dist built; DIR: this one)
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { DATA_DIR, machine, plainWordsQuery, quantile, ROOT, SEARCH_PREFILTER, WORDS, wordOf } from './lib.mjs'

const builds = [process.argv[2], process.argv[3] ?? ROOT].map((directory) => join(directory, 'dist'))
if (process.argv[2] === undefined) throw new Error('usage: node bench/full-text-ab.mjs BASELINE_DIR [DIR]')
const indexes = await Promise.all(builds.map(async (dist) => (await import(join(dist, 'lancedb/index.js'))).createLancedbSearchIndex({ uri: join(DATA_DIR, 'search-1m-texts'), dimensions: 100 })))
// Words of the texts' vocabulary at ranks 300 to 30,000 (search-scale.mjs draws them by rank).
const sets = {
  'a title word and a text word': WORDS.slice(0, 30).map((word, n) => `${word} ${wordOf(300 + n * 997, 3)}`),
  'two text words': WORDS.slice(0, 30).map((_, n) => `${wordOf(500 + n * 1301, 3)} ${wordOf(900 + n * 733, 3)}`),
  'two title words and a text word': WORDS.slice(30, 60).map((word, n) => `${word} ${WORDS[(n * 7) % WORDS.length]} ${wordOf(700 + n * 911, 3)}`),
}
console.log(`${machine()}; baseline ${builds[0]}, against ${builds[1]}\n`)
console.log('| queries | prefilter | baseline p50 | this build p50 | ratio |\n|---|---|---|---|---|')
for (const [name, set] of Object.entries(sets)) {
  for (const qualifiers of [SEARCH_PREFILTER, []]) {
    for (const text of set.slice(0, 3)) for (const index of indexes) await index.fullText(plainWordsQuery(text), qualifiers, 100)
    const times = indexes.map(() => [])
    for (const text of set) {
      for (let run = 0; run < 2; run++) {
        for (const [at, index] of indexes.entries()) {
          const started = performance.now()
          await index.fullText(plainWordsQuery(text), qualifiers, 100)
          times[at].push(performance.now() - started)
        }
      }
    }
    const [baseline, build] = times.map((samples) => quantile(samples.toSorted((a, b) => a - b), 0.5))
    console.log(`| ${name} | ${qualifiers.length > 0 ? 'type:legislation jurisdiction:US-WA' : 'none'} | ${baseline.toFixed(1)} ms | ${build.toFixed(1)} ms | ${(build / baseline).toFixed(2)} |`)
  }
}
for (const index of indexes) await index.close()
