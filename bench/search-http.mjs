// Search over HTTP at 1,000,000 entities: what a user gets from `entity-registry serve` (the Node
// adapter, SQLite, the LanceDB index under the data directory, the bundled word vectors) against the
// search's own time over the same files in the same run:
//   - index: both rankings and their fusion, what the endpoint asks of the index (as search-scale.mjs measures it);
//   - search: `createSearch` in this process, the index and the store's lookup of the results (one query a page);
//   - HTTP: `/v1/search` through `serve`, with its key, rate limit and document.
// Each at 1 and at 10 concurrent requests (autocannon's connections over HTTP, as many loops in
// process), the three interleaved round by round; p50 and p99 of every request.
//   node bench/search-http.mjs [--entities 1000000] [--duration 5] [--rounds 2]
// The data directory is built once, as a user builds it (`entity-registry import`, then `reindex`),
// under bench/.data/search-http-<entities>.
import { execFileSync } from 'node:child_process'
import { createWriteStream, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { finished } from 'node:stream/promises'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { createSearch, fuse, parseGffs, queryWord, tokenize } from '../dist/index.js'
import { createWordVectorEmbedder } from '../dist/embedders/index.js'
import { createSqliteStore } from '../dist/kysely/index.js'
import { createLancedbSearchIndex } from '../dist/lancedb/index.js'
import { loadNicknames } from '../dist/node/index.js'
import { DATA_DIR, KEY, machine, quantile, RATE_LIMIT, ROOT as root, searchEntities, startServer, WORDS } from './lib.mjs'

const { values: options } = parseArgs({
  options: {
    entities: { type: 'string', default: '1000000' },
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '2' },
  },
})
const total = Number(options.entities)
const duration = Number(options.duration)
const cli = join(root, 'dist/cli/main.js')

// search-scale.mjs's entities.
const { fieldsOf, pick, reseed } = searchEntities()
const recordOf = (n) => ({ id: `s${n.toString(36).padStart(5, '0')}`, ...fieldsOf(n), texts: [] })

/** The data directory: the records imported and indexed by the CLI, as a user would (built once). */
async function dataDirectory() {
  const directory = join(DATA_DIR, `search-http-${total}`)
  if (existsSync(directory)) return directory
  const partial = `${directory}.partial`
  rmSync(partial, { recursive: true, force: true })
  mkdirSync(partial, { recursive: true })
  const file = join(partial, 'records.ndjson')
  const out = createWriteStream(file)
  for (let n = 0; n < total; n++) if (!out.write(`${JSON.stringify(recordOf(n))}\n`)) await new Promise((resolve) => out.once('drain', resolve))
  out.end()
  await finished(out)
  for (const command of [['import', '--data', partial, '--batch', '10000', '--progress', 'none', file], ['reindex', '--data', partial, '--progress', 'none']]) {
    const started = performance.now()
    execFileSync(process.execPath, [cli, ...command], { stdio: ['ignore', 'ignore', 'inherit'] })
    console.log(`${command[0]}: ${((performance.now() - started) / 1000).toFixed(0)} s`)
  }
  rmSync(file)
  renameSync(partial, directory)
  return directory
}

// Two title words under a prefilter of 3% of the entities: search-scale.mjs's 60 queries, the same
// whether or not this run drew the titles (their sequence went on from the titles when it did).
const PREFILTER = 'type:legislation jurisdiction:US-WA'
reseed(11)
const queries = Array.from({ length: 60 }, () => `${PREFILTER} ${pick(WORDS)} ${pick(WORDS)}`)

const data = await dataDirectory()
console.log(`machine: ${machine()}; load average ${execFileSync('uptime', { encoding: 'utf8' }).split('load average: ')[1].trim()}`)
const embedder = createWordVectorEmbedder()
const store = await createSqliteStore({ file: join(data, 'registry.sqlite') })
const index = await createLancedbSearchIndex({ uri: join(data, 'search'), dimensions: embedder.dimensions })
// As `serve` searches: with the bundled nicknames.
const search = createSearch(store, { index, embedder, nicknames: await loadNicknames() })
const parsed = queries.map((q) => parseGffs(q, { allowFreeText: true }))
/** What search asks of the index for a query: both rankings, fused (plain words: the titles hold no names). */
async function indexAlone(query) {
  const words = query.text.map((term) => term.text).join(' ')
  const [vector] = await embedder.embed([words])
  const textQuery = { words: tokenize(words).map((token) => queryWord(token, [token])), phrases: [] }
  const [byText, byMeaning] = await Promise.all([index.fullText(textQuery, query.qualifiers, 100), index.nearest(vector, query.qualifiers, 100)])
  return fuse(byText, byMeaning, textQuery.words.length)
}

/** `concurrency` loops over the queries for `duration` seconds: every request's milliseconds, and requests a second. */
async function inProcess(run, concurrency) {
  const samples = []
  const until = performance.now() + duration * 1000
  await Promise.all(
    Array.from({ length: concurrency }, async (_, loop) => {
      for (let at = loop; performance.now() < until; at++) {
        const started = performance.now()
        await run(parsed[at % parsed.length])
        samples.push(performance.now() - started)
      }
    }),
  )
  return summary(samples, samples.length / duration)
}

const server = await startServer(process.execPath, [cli, 'serve', '--data', data, '--api-key', KEY, '--rate-limit', RATE_LIMIT, '--log', 'warn', '--port', '0'])
/** The same queries over HTTP, autocannon cycling through them on each connection. */
async function overHttp(connections) {
  const requests = queries.map((q) => ({ path: `/v1/search?q=${encodeURIComponent(q)}` }))
  const samples = []
  const instance = autocannon({ url: server.url, connections, duration, requests, headers: { Authorization: `Bearer ${KEY}` } })
  instance.on('response', (_client, _status, _bytes, responseTime) => samples.push(responseTime))
  const result = await instance
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${result.non2xx} non-2xx answers, ${result.errors} errors`)
  return summary(samples, result.requests.average)
}

function summary(samples, rate) {
  samples.sort((a, b) => a - b)
  return { p50: quantile(samples, 0.5), p99: quantile(samples, 0.99), rate }
}

try {
  // Search waits for the server's index to open: the first answers warm both sides.
  for (const q of queries.slice(0, 5)) await fetch(`${server.url}/v1/search?q=${encodeURIComponent(q)}`, { headers: { Authorization: `Bearer ${KEY}` } })
  const ways = {
    index: (concurrency) => inProcess(indexAlone, concurrency),
    search: (concurrency) => inProcess((query) => search.search(query), concurrency),
    HTTP: overHttp,
  }
  const results = {}
  for (let round = 0; round < Number(options.rounds); round++) {
    for (const concurrency of [1, 10]) {
      for (const [name, measure] of Object.entries(ways)) ((results[concurrency] ??= {})[name] ??= []).push(await measure(concurrency))
      process.stdout.write('.')
    }
  }
  const mean = (runs, key) => runs.reduce((sum, run) => sum + run[key], 0) / runs.length
  console.log(`\n${total.toLocaleString('en')} entities on SQLite, the LanceDB index; \`${PREFILTER}\` and two title words, ${queries.length} queries; ${options.rounds} interleaved rounds of ${duration} s (means)\n`)
  console.log('| concurrent requests | measured | req/s | p50 | p99 | p50 / index |\n|---|---|---|---|---|---|')
  for (const [concurrency, byWay] of Object.entries(results)) {
    const indexP50 = mean(byWay.index, 'p50')
    for (const [name, runs] of Object.entries(byWay)) {
      console.log(`| ${concurrency} | ${name} | ${Math.round(mean(runs, 'rate')).toLocaleString('en')} | ${mean(runs, 'p50').toFixed(1)} ms | ${mean(runs, 'p99').toFixed(1)} ms | ${(mean(runs, 'p50') / indexP50).toFixed(2)} |`)
    }
  }
} finally {
  server.stop()
  await index.close()
  await store.close()
}
