// The nearest vectors with no or a broad prefilter at 1,000,000 entities, in this process: the
// resident index's partitions (`VectorPartitions`, loaded as `serve` loads them) beside LanceDB's
// IVF_FLAT (50 probes, what answered them before), over search-cost.mjs's catalogue and the words of
// its four query sets, with no prefilter, under a broad one (a type, 10 to 60% of the entities) and
// under the query's own if it has one (the 2% prefilter; a common word's type or jurisdiction).
// For each: the median CPU of a query (one at a time, `process.cpuUsage`, LanceDB's threads
// included), and recall@10 against exact search (LanceDB's flat search over the Float32 vectors):
// a hit counts when its exact cosine is at least the exact tenth's (less 1e-6): many entities share
// one vector (persons of a role, whose names no word vector knows), any of which is a right answer.
// Also what loading the partitions took, and the memory they hold.
//   node bench/search-vectors.mjs [--entities 1000000] [--queries 30]
// after `npm run build` and a first run of search-cost.mjs (which builds the data it reads).
import { existsSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import * as lancedb from '@lancedb/lancedb'
import { createResidentSearchIndex, parseGffs } from '../dist/index.js'
import { createWordVectorEmbedder } from '../dist/embedders/index.js'
import { createLancedbSearchIndex } from '../dist/lancedb/index.js'
import { catalogQuerySets, DATA_DIR, machine, quantile } from './lib.mjs'

const { values: options } = parseArgs({
  options: {
    entities: { type: 'string', default: '1000000' },
    queries: { type: 'string', default: '30' },
  },
})
const total = Number(options.entities)
const data = join(DATA_DIR, `search-catalog-${total}`)
if (!existsSync(data)) throw new Error(`no ${data}: run bench/search-cost.mjs --entities ${total} first`)
const loadAverage = () => loadavg().map((load) => load.toFixed(2)).join(', ')

const embedder = createWordVectorEmbedder()
const onDisk = await createLancedbSearchIndex({ uri: join(data, 'search'), dimensions: embedder.dimensions })
const heapBefore = process.memoryUsage()
let loaded
const resident = await createResidentSearchIndex({ behind: onDisk, dimensions: embedder.dimensions, onLoaded: (figures) => (loaded = figures) })
while (loaded === undefined) await new Promise((resolve) => setTimeout(resolve, 100))
const heapAfter = process.memoryUsage()
const table = await (await lancedb.connect(join(data, 'search'))).openTable('entities')

// A seed of its own; the first five of each set warm up.
const WARM_UP = 5
const sets = catalogQuerySets(total, WARM_UP + Number(options.queries), 5)
const TYPES = ['type:person', 'type:legislation', 'type:committee']
const cpuMillis = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}
const cosine = (a, b) => {
  let [dot, normA, normB] = [0, 0, 0]
  for (let at = 0; at < a.length; at++) [dot, normA, normB] = [dot + a[at] * b[at], normA + a[at] * a[at], normB + b[at] * b[at]]
  return dot / Math.sqrt(normA * normB)
}
const where = (qualifiers) => qualifiers.map((qualifier) => `${qualifier.field} = '${qualifier.values[0]}'`).join(' AND ') || null
const filtered = (builder, qualifiers) => (where(qualifiers) === null ? builder : builder.where(where(qualifiers)))
/** The exact tenth's cosine (LanceDB's flat search). */
async function exactTenth(vector, qualifiers) {
  const rows = await filtered(table.query().nearestTo(Array.from(vector)).distanceType('cosine').bypassVectorIndex().select(['id', '_distance']).limit(10), qualifiers).toArray()
  return 1 - rows[rows.length - 1]._distance
}
/** The share of the top ten hits whose exact cosine (of their Float32 vectors) reaches the exact tenth's. */
async function recallOf(vector, hits, tenth) {
  if (hits.length === 0) {
    console.log(`\nno hits: ${JSON.stringify(Array.from(vector.slice(0, 4)))}...`)
    return 0
  }
  const ids = hits.slice(0, 10).map((hit) => `'${hit.id}'`)
  const rows = await table.query().where(`id IN (${ids.join(',')})`).select(['id', 'vector']).toArray()
  return rows.filter((row) => cosine(vector, row.vector.toArray()) >= tenth - 1e-6).length / 10
}

const WAYS = {
  'in memory (partitions)': (vector, qualifiers) => resident.nearest(vector, qualifiers, 100),
  'LanceDB IVF_FLAT, 50 probes': (vector, qualifiers) => onDisk.nearest(vector, qualifiers, 100),
}
const rows = []
for (const [set, texts] of Object.entries(sets)) {
  const queries = []
  for (const [at, text] of texts.entries()) {
    const query = parseGffs(text, { allowFreeText: true })
    const [vector] = await embedder.embed([query.text.map((term) => term.text).join(' ')])
    // A query none of whose words has a vector has no nearest.
    if (vector.every((component) => component === 0)) continue
    const warm = at < WARM_UP
    queries.push({ vector, qualifiers: [], filter: 'none', warm })
    queries.push({ vector, qualifiers: parseGffs(TYPES[at % TYPES.length], { allowFreeText: false }).qualifiers, filter: 'a type', warm })
    if (query.qualifiers.length > 0) queries.push({ vector, qualifiers: query.qualifiers, filter: "the query's", warm })
  }
  for (const filter of ['none', 'a type', "the query's"]) {
    const measured = queries.filter((query) => query.filter === filter)
    if (measured.length === 0) continue
    for (const [way, nearest] of Object.entries(WAYS)) {
      const cpu = []
      const recalls = []
      for (const { vector, qualifiers, warm } of measured) {
        const before = cpuMillis()
        const hits = await nearest(vector, qualifiers)
        if (warm) continue
        if (hits.length === 0) console.log(`\n${way}: no hits under ${JSON.stringify(qualifiers)} (${set})`)
        cpu.push(cpuMillis() - before)
        recalls.push(await recallOf(vector, hits, await exactTenth(vector, qualifiers)))
      }
      cpu.sort((a, b) => a - b)
      rows.push({ set, filter, way, cpu: quantile(cpu, 0.5), p90: quantile(cpu, 0.9), recall: recalls.reduce((sum, recall) => sum + recall, 0) / recalls.length, queries: recalls.length })
    }
  }
  process.stdout.write('.')
}
const mb = (bytes) => Math.round(bytes / 1024 / 1024)
console.log(`\n${machine()}; load average ${loadAverage()} at the end; ${total.toLocaleString('en')} entities`)
console.log(`loaded in ${loaded.milliseconds} ms, of which the partitions ${loaded.partitioning} ms; RSS +${mb(heapAfter.rss - heapBefore.rss)} MB, array buffers +${mb(heapAfter.arrayBuffers - heapBefore.arrayBuffers)} MB (the whole resident index)\n`)
console.log('| query set | prefilter | nearest | queries | CPU a query, median (p90) | recall@10 |\n|---|---|---|---|---|---|')
for (const row of rows) console.log(`| ${row.set} | ${row.filter} | ${row.way} | ${row.queries} | ${row.cpu.toFixed(2)} ms (${row.p90.toFixed(2)}) | ${row.recall.toFixed(3)} |`)
await resident.close()
