// The resident index's full text alone at 1,000,000 entities, in this process: its CPU a query for
// each of search-cost.mjs's query sets, the text queries being the ones search itself asks (the
// given names' nickname forms, the words' relatives where they apply), captured by running each
// query through `createSearch` once over the resident index, then replayed one at a time:
//   node bench/search-text.mjs [--entities 1000000] [--queries 100] [--sets title,prefilter,name,common]
//     [--dist DIR] [--baseline DIR] [--profile PREFIX] [--results FILE]
// after `npm run build` and a first run of search-cost.mjs (which builds the data it reads).
// `--dist` ranks with another build (a checkout's dist/, for a before/after in one sitting);
// `--baseline` loads a second build's index too and replays each call on both, the order swapped
// call by call, so that the machine's drift falls on both alike; but the build loaded first (`--dist`)
// measures faster, the same build against itself by a tenth (bench/README.md, session 60): run both
// orders, or each build alone in turn, before calling a difference of that size a gain;
// `--profile` writes a CPU profile of each set's replay to PREFIX-<set>.cpuprofile (read it with
// profile-top.mjs); `--results` writes every call's hits (ids, scores, matched words) as JSON, to
// compare two builds' answers with `cmp`.
import { writeFileSync } from 'node:fs'
import { Session } from 'node:inspector'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { catalogQuerySets, machine, openCatalogSearch, quantile, ROOT } from './lib.mjs'

const { values: options } = parseArgs({
  options: {
    entities: { type: 'string', default: '1000000' },
    queries: { type: 'string', default: '100' },
    sets: { type: 'string', default: 'title,prefilter,name,common' },
    dist: { type: 'string', default: join(ROOT, 'dist') },
    baseline: { type: 'string' },
    profile: { type: 'string' },
    results: { type: 'string' },
  },
})
const total = Number(options.entities)
const SET_NAMES = { title: 'title words', prefilter: 'title words, 2% prefilter', name: 'name with a typo', common: 'common word' }
const { createSearch, parseGffs, embedder, store, resident, entities, milliseconds, nicknames, relatives } = await openCatalogSearch(total, options.dist)
const loadAverage = () => loadavg().map((load) => load.toFixed(2)).join(', ')
console.log(`${options.dist}: machine ${machine()}; ${entities.toLocaleString('en')} entities loaded in ${(milliseconds / 1000).toFixed(1)} s; load average ${loadAverage()}`)
const baseline = options.baseline === undefined ? null : await openCatalogSearch(total, options.baseline)
if (baseline !== null) console.log(`baseline ${options.baseline}: loaded in ${(baseline.milliseconds / 1000).toFixed(1)} s`)

// What search asks full text, query by query: captured through an index that records its calls.
let calls = []
const recording = { ...resident, fullText: (...call) => (calls.push(call), resident.fullText(...call)) }
const search = createSearch(store, { index: recording, embedder, nicknames, relatives })
const WARM_UP = 10
const allSets = catalogQuerySets(total, WARM_UP + Number(options.queries), 5)

const cpuMillis = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}
const session = new Session()
session.connect()
const post = (method, params) => new Promise((done, fail) => session.post(method, params, (error, result) => (error ? fail(error) : done(result))))

const answers = {}
console.log(`\n| set | text queries | CPU a query: median | p90 | mean | hits a query |${baseline === null ? '' : ' baseline: median | p90 | mean |'}\n|---|---|---|---|---|---|${baseline === null ? '' : '---|---|---|'}`)
const summary = (cpu) => {
  const sorted = [...cpu].sort((a, b) => a - b)
  const mean = cpu.reduce((sum, each) => sum + each, 0) / cpu.length
  return `${quantile(sorted, 0.5).toFixed(2)} ms | ${quantile(sorted, 0.9).toFixed(2)} ms | ${mean.toFixed(2)} ms`
}
/** One call's CPU on `index`, and what it found. */
const timed = async (index, call) => {
  const before = cpuMillis()
  const found = await index.fullText(...call)
  return { spent: cpuMillis() - before, found }
}
for (const short of options.sets.split(',')) {
  const name = SET_NAMES[short]
  calls = []
  let warmUpCalls = 0
  for (const [at, text] of allSets[name].entries()) {
    if (at === WARM_UP) warmUpCalls = calls.length
    await search.search(parseGffs(text, { allowFreeText: true }))
  }
  // Replayed one at a time: the warm-up queries' calls untimed, then each measured call.
  const captured = calls
  const cpu = []
  const baselineCpu = []
  const hits = []
  for (const [at, call] of captured.entries()) {
    const baselineFirst = baseline !== null && at % 2 === 1
    if (baselineFirst) baselineCpu.push((await timed(baseline.resident, call)).spent)
    const { spent, found } = await timed(resident, call)
    if (baseline !== null && !baselineFirst) baselineCpu.push((await timed(baseline.resident, call)).spent)
    if (at < warmUpCalls) continue
    cpu.push(spent)
    hits.push(found)
  }
  answers[name] = hits
  const baselineColumns = baseline === null ? '' : ` ${summary(baselineCpu.slice(warmUpCalls))} |`
  console.log(`| ${name} | ${cpu.length} | ${summary(cpu)} | ${(hits.reduce((sum, each) => sum + each.length, 0) / hits.length).toFixed(1)} |${baselineColumns}`)
  if (options.profile !== undefined) {
    await post('Profiler.enable')
    await post('Profiler.setSamplingInterval', { interval: 200 })
    await post('Profiler.start')
    for (const call of captured) await resident.fullText(...call)
    const { profile } = await post('Profiler.stop')
    writeFileSync(`${options.profile}-${short}.cpuprofile`, JSON.stringify(profile))
  }
}
console.log(`\nload average after: ${loadAverage()}`)
if (options.results !== undefined) writeFileSync(options.results, JSON.stringify(answers))
for (const opened of [{ resident, store }, baseline].filter((each) => each !== null)) {
  await opened.resident.close()
  await opened.store.close()
}
