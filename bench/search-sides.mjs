// Where each query's relevant entities rank on each side of search, before fusion: the full-text
// ranking of the typed words, the WordNet relatives' ranking (when search widens the query), the
// ranking of the people of a place the query names (`place`, when it names one), the semantic
// side's nearest (with the similarity and the floor `standingOut` applies), and the fused result.
// Looks at the development part only unless told otherwise (`--part held-out` is for a decision
// already made). The memory index, the renditions' texts searched, as `serve` runs.
// `node bench/search-sides.mjs [--kind paraphrase] [--part dev] [--set FILE | 2 | 3] [--embedder none]` after `npm run build`.
// Each relevant entity (grade): its rank fused, in the typed words' full text (with the words it
// matched, `texts only` when only its passages did), in the relatives' full text (`no`: not widened),
// among the nearest with its similarity; then the top 5 of the fused, nearest and full-text rankings
// (`*`: relevant). The second set is held out whole: run this on it only for a change already decided.
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { createEntityTexts, createIndexer, createSearch, parseGffs } from '../dist/index.js'
import { createNoEmbedder, createWordVectorEmbedder } from '../dist/embedders/index.js'
import { createMemoryBlobStore, createMemorySearchIndex, createMemoryStore } from '../dist/memory/index.js'
import { importNdjson, loadNicknames, loadWordRelatives } from '../dist/node/index.js'
import { readRelevanceSet } from '../test/search/relevance.mjs'

const { values: options } = parseArgs({
  options: {
    set: { type: 'string', default: new URL('../test/search/relevance-set.json', import.meta.url).pathname },
    kind: { type: 'string' },
    part: { type: 'string', default: 'dev' },
    embedder: { type: 'string', default: 'default' },
  },
})
/** As src/search/search-service.ts has them: a neighbour counts when it is STANDOUT above the BACKGROUND_RANKth's similarity. */
const BACKGROUND_RANK = 50
const STANDOUT = 0.07
// `--set 2` and `--set 3`: the project's other sets by their number.
if (/^[0-9]+$/.test(options.set)) options.set = new URL(`../test/search/relevance-set-${options.set}.json`, import.meta.url).pathname
const queries = readRelevanceSet(resolve(options.set)).filter((query) => query.part === options.part && (options.kind === undefined || query.kind === options.kind))
const demo = new URL('../demo/', import.meta.url).pathname
const store = createMemoryStore()
const blobs = createMemoryBlobStore()
await importNdjson(readFileSync(`${demo}entities.jsonl`, 'utf8').split('\n'), { warehouse: store.warehouse, blobs, baseDir: demo })
const embedder = options.embedder === 'none' ? createNoEmbedder() : createWordVectorEmbedder()
const memory = createMemorySearchIndex()
await createIndexer({ store, index: memory, embedder, texts: createEntityTexts({ blobs }) }).catchUp()
// The index, its calls recorded: the first full text is the typed words', a second the relatives'.
let calls = []
const index = new Proxy(memory, {
  get(target, key) {
    const value = target[key]
    if (key !== 'fullText' && key !== 'nearest') return typeof value === 'function' ? value.bind(target) : value
    return async (...args) => {
      const hits = await value.apply(target, args)
      calls.push({ side: key, query: args[0], qualifiers: args[1], hits })
      return hits
    }
  },
})
const search = createSearch(store, { index, embedder, nicknames: await loadNicknames(), relatives: await loadWordRelatives() })
const rankOf = (hits, id) => {
  const rank = hits.findIndex((hit) => hit.id === id)
  return rank === -1 ? '-' : String(rank + 1)
}
for (const query of queries) {
  calls = []
  const parsed = parseGffs(query.q, { allowFreeText: true })
  const fused = (await search.search(parsed)).map((entity) => entity.id)
  // The ranking of a place's people runs under one more qualifier (its jurisdiction); search keeps those that matched the most words.
  const placeCall = calls.find((call) => call.side === 'fullText' && call.qualifiers.length > parsed.qualifiers.length)
  const placeHits = placeCall?.hits.filter((hit) => !hit.inTextsOnly) ?? []
  const place = placeCall === undefined ? null : placeHits.filter((hit) => hit.matched === Math.max(0, ...placeHits.map((other) => other.matched)))
  const texts = calls.filter((call) => call.side === 'fullText' && call !== placeCall)
  const nearest = calls.find((call) => call.side === 'nearest')?.hits ?? []
  const background = nearest[Math.min(BACKGROUND_RANK, nearest.length) - 1]?.score ?? 0
  console.log(`\n${query.q}  [${query.kind}]  text hits ${texts[0]?.hits.length ?? 0}${texts.length > 1 ? `, relatives (${texts[1].query.words.map((word) => word.token).join(' ')}) hits ${texts[1].hits.length}` : ''}${place === null ? '' : `, place (${placeCall.qualifiers.at(-1).values.join(' ')}: ${placeCall.query.words.map((word) => word.token).join(' ')}) hits ${place.length}`}; background ${background.toFixed(3)}`)
  for (const [id, grade] of Object.entries(query.relevant)) {
    const near = nearest.findIndex((hit) => hit.id === id)
    const similarity = near === -1 ? '' : ` ${nearest[near].score.toFixed(3)}${nearest[near].score >= background + STANDOUT ? ' stands out' : ''}`
    const text = texts[0]?.hits.find((hit) => hit.id === id)
    console.log(`  ${id} (${grade}): fused ${rankOf(fused.map((id) => ({ id })), id)}, text ${rankOf(texts[0]?.hits ?? [], id)}${text ? ` (matched ${text.matched}${text.inTextsOnly ? ', texts only' : ''})` : ''}, relatives ${texts.length > 1 ? rankOf(texts[1].hits, id) : 'no'}, place ${place === null ? 'no' : rankOf(place, id)}, nearest ${near === -1 ? '-' : near + 1}${similarity}`)
  }
  const top = fused.slice(0, 5).map((id) => `${id}${query.relevant[id] ? '*' : ''}`)
  console.log(`  fused top 5: ${top.join(' ')}; nearest top 5: ${nearest.slice(0, 5).map((hit) => `${hit.id}${query.relevant[hit.id] ? '*' : ''} ${hit.score.toFixed(3)}`).join(', ')}`)
  console.log(`  text top 5: ${(texts[0]?.hits ?? []).slice(0, 5).map((hit) => `${hit.id}${query.relevant[hit.id] ? '*' : ''} m${hit.matched}${hit.inTextsOnly ? 't' : ''} ${hit.score.toFixed(2)}`).join(', ')}`)
}
