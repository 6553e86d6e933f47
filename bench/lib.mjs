// Shared helpers of the benchmarks: build a large store once (cached under bench/.data), time requests
// through the registry's fetch handler (server time: routing, SQL, JSON), report percentiles.
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, totalmem } from 'node:os'
import { join, resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import { createInterface } from 'node:readline'
import { pathToFileURL } from 'node:url'
import Database from 'better-sqlite3'
import pg from 'pg'
import { startPgBouncerServer } from '../test/support/pgbouncer-server.mjs'
import { createApiKeyAuthenticator, createRegistry, queryWord, tokenize } from '../dist/index.js'
import { createSqliteStore } from '../dist/kysely/index.js'

export const KEY = 'bench-key'
/** The servers that keep the contract limit each key, at a limit no run reaches. */
export const RATE_LIMIT = String(1_000_000_000)
export const DATA_DIR = new URL('./.data/', import.meta.url).pathname
export const ROOT = new URL('..', import.meta.url).pathname

/** The fields of /proc/<pid>/stat after the command name (Linux): [1] is the parent, [11..14] CPU times. */
export const procStatOf = (pid) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')

/** User plus system CPU time of a process so far, in microseconds (Linux). */
export function processCpuMicros(pid) {
  const fields = procStatOf(pid)
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100
}

/**
 * `entity-registry serve` as the HTTP benchmarks run it, from the build in `checkout`: over `data`
 * (and `database`'s arguments), API key checked, `rateLimit` a minute, search and request logs off.
 */
export const benchServeArgs = (checkout, data, database = [], rateLimit = RATE_LIMIT) =>
  [join(checkout, 'dist/cli/main.js'), 'serve', '--data', data, ...database, '--api-key', KEY, '--rate-limit', rateLimit, '--search', 'none', '--log', 'warn', '--port', '0']

/** The hand-written floor (`servers/floor.mjs`) over `data`, with its own `flags` (`--fastify`, `--links`). */
export const floorArgs = (data, database = [], ...flags) => [join(ROOT, 'bench/servers/floor.mjs'), data, ...database, ...flags]

/** The contract peer (`servers/fastify-contract.mjs`) over `data`, with the benchmarks' key and rate limit. */
export const contractPeerArgs = (data, database = []) => [join(ROOT, 'bench/servers/fastify-contract.mjs'), data, ...database, '--key', KEY, '--rate-limit', RATE_LIMIT]

/** `url` with every connection's search_path set to `schema`, as `serve --database` takes it. */
export function inSchema(url, schema) {
  const withSchema = new URL(url)
  withSchema.searchParams.set('options', `-c search_path=${schema}`)
  return withSchema.href
}
/** The PostgreSQL schema of http.mjs's data set of `total` entities (profile-get.mjs serves it too). */
export const httpSchemaOf = (total) => `bench_http_${total}`

/** A PgBouncer in front of `url`, and a URL through it whose sessions use `schema` (a role of its name). */
export async function throughPgBouncer(url, schema) {
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  try {
    if ((await admin.query('select 1 from pg_roles where rolname = $1', [schema])).rowCount === 0) await admin.query(`create role ${schema} login superuser`)
    await admin.query(`alter role ${schema} set search_path = ${schema}, public`)
  } finally {
    await admin.end()
  }
  const server = await startPgBouncerServer({ upstream: url, poolSize: 10 })
  return { server, database: server.urlAs(schema) }
}

/**
 * Starts a server in its own process group and resolves when it prints "listening on URL": its URL,
 * the admin port's URL when it printed one (`--admin-port`), its pid, and a stop function that ends
 * the whole group (`npm start` runs the server as a child).
 */
export function startServer(command, args, { cwd = ROOT, env = {}, readyWhen } = {}) {
  const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'], detached: true })
  let admin
  let url
  // `readyWhen`: a line the server prints once it is ready to be measured (after it listens).
  let ready = readyWhen === undefined
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${command} ${args.join(' ')} exited with ${code}`)))
    createInterface({ input: child.stdout }).on('line', (line) => {
      admin ??= /^admin \(.*\) on (http:\/\/\S+)$/.exec(line)?.[1]
      url ??= /^listening on (http:\/\/\S+)$/.exec(line)?.[1]
      ready ||= readyWhen?.test(line) ?? false
      if (url !== undefined && ready) resolve({ url, admin, pid: child.pid, stop: () => process.kill(-child.pid, 'SIGTERM') })
    })
  })
}

/**
 * One client of a load benchmark: sends the paths in turn from `first`, each as soon as the last is
 * answered, while `going()`, and tells `record(milliseconds, failure, path)` of each request; a
 * failure is a 5xx (`503 /v1/search`) or no answer within 10 s (`no answer (TimeoutError)`), otherwise null.
 */
export async function client(url, paths, { first = 0, going, record }) {
  let next = first
  while (going()) {
    const path = paths[next++ % paths.length]()
    const sentAt = performance.now()
    let failure = null
    try {
      const response = await fetch(`${url}${path}`, { headers: { Authorization: `Bearer ${KEY}` }, signal: AbortSignal.timeout(10_000) })
      await response.arrayBuffer()
      if (response.status >= 500) failure = `${response.status} ${path.split('?')[0]}`
    } catch (error) {
      failure = `no answer (${error.name})`
    }
    record(performance.now() - sentAt, failure, path)
  }
}

/** The value at quantile `q` (0 to 1) of ascending `sorted` samples; 0 when there are none. */
export const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0

/** Opens (building it on first use) a SQLite store under bench/.data; an interrupted build is not kept. */
export async function cachedSqliteStore(name, build, tuning = {}) {
  mkdirSync(DATA_DIR, { recursive: true })
  const file = join(DATA_DIR, `${name}.sqlite`)
  if (!existsSync(file)) {
    const partial = join(DATA_DIR, `${name}.partial.sqlite`)
    for (const suffix of ['', '-wal', '-shm']) rmSync(partial + suffix, { force: true })
    const started = performance.now()
    const store = await createSqliteStore({ file: partial })
    await build(store)
    await store.close()
    renameSync(partial, file)
    console.log(`built ${name} in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  }
  return createSqliteStore({ ...tuning, file })
}

/** Applies operations in batches (one transaction each), printing progress. */
export async function applyInBatches(warehouse, total, operationAt, batchSize = 5000) {
  for (let start = 0; start < total; start += batchSize) {
    const batch = []
    for (let index = start; index < Math.min(total, start + batchSize); index++) batch.push(operationAt(index))
    const results = await warehouse.apply(batch)
    const failed = results.find((result) => !result.ok)
    if (failed) throw failed.error
    if ((start / batchSize) % 20 === 0) process.stdout.write(`  ${start + batch.length} / ${total}\r`)
  }
  process.stdout.write('\n')
}

export function benchRegistry(store, options = {}) {
  const registry = createRegistry({ store, auth: createApiKeyAuthenticator({ keys: [KEY] }), ...options })
  return (path) => registry.fetch(new Request(`http://bench.local${path}`, { headers: { Authorization: `Bearer ${KEY}` } }))
}

/** Times `count` runs of `send(i)` (each reading the whole body, answered `status`); milliseconds. */
export async function time(count, send, status = 200) {
  const samples = []
  for (let index = 0; index < count; index++) {
    const started = performance.now()
    const response = await send(index)
    await response.arrayBuffer()
    samples.push(performance.now() - started)
    if (response.status !== status) throw new Error(`status ${response.status}, not ${status}`)
  }
  samples.sort((a, b) => a - b)
  const at = (q) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]
  return { p50: at(0.5), p95: at(0.95), max: samples.at(-1), mean: samples.reduce((a, b) => a + b, 0) / samples.length }
}

/** Puts `lines` into bench/README.md between `<!-- name -->` and `<!-- /name -->` (`--write`). */
export function writeReadmeSection(name, lines) {
  const readme = join(ROOT, 'bench/README.md')
  const text = readFileSync(readme, 'utf8')
  const [start, end] = [`<!-- ${name} -->`, `<!-- /${name} -->`]
  if (!text.includes(start) || !text.includes(end)) throw new Error(`bench/README.md has no ${start} ... ${end} markers`)
  writeFileSync(readme, `${text.slice(0, text.indexOf(start) + start.length)}\n${lines.join('\n')}\n${text.slice(text.indexOf(end))}`)
}

export function machine() {
  return `${cpus()[0]?.model ?? 'unknown CPU'} x${cpus().length}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`
}

export const ms = (value) => `${value.toFixed(2)} ms`

export const TOTAL = 1_000_000
// Words for titles: a fixed list of common English words, so that queries meet realistic frequencies.
export const WORDS = ('health care insurance tax relief budget defense energy water school education farm agriculture bank finance ' +
  'housing transport road rail airport veteran military border trade labor worker wage family child tribe land forest park ' +
  'ocean fish climate weather disaster emergency police court judge prison drug medicine hospital doctor patient nurse senior ' +
  'retirement pension security privacy internet science research space technology small business export import tariff ' +
  'election vote census postal museum library art music sport youth women immigrant refugee city rural county state nation').split(' ')
/**
 * The synthetic entities of the search benchmarks (`search-scale.mjs`, `search-http.mjs`): titles of
 * 5 to 9 of WORDS, three types, ten jurisdictions. `fieldsOf(n)` draws entity n's title from one
 * seeded sequence, which `pick` continues for the benchmark's queries: call `fieldsOf` in n order.
 */
export function searchEntities() {
  const states = ['AL', 'CA', 'NY', 'TX', 'WA', 'OR', 'FL', 'IL', 'PA', 'OH']
  const types = ['person', 'legislation', 'committee']
  let seed = 7
  const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647)
  const pick = (items) => items[Math.floor(random() * items.length)]
  const titleOf = () => Array.from({ length: 5 + Math.floor(random() * 5) }, () => pick(WORDS)).join(' ')
  const fieldsOf = (n) => ({ type: types[n % 3], jurisdiction: `US-${states[(n * 7) % states.length]}`, title: titleOf(), localType: n % 3 === 1 ? 'bill' : 'record' })
  /** Starts the sequence again from `value`: queries the same whether or not this run drew the titles. */
  const reseed = (value) => {
    seed = value
  }
  return { fieldsOf, pick, reseed }
}
/** Full text's query for plain words, as the search benchmarks ask it of an index (their titles hold no names). */
export const plainWordsQuery = (text) => ({ words: tokenize(text).map((token) => queryWord(token, [token])), phrases: [] })
/** The search benchmarks' prefilter: `type:legislation jurisdiction:US-WA`, 3% of `searchEntities`. */
export const SEARCH_PREFILTER = [
  { kind: 'qualifier', field: 'type', negated: false, op: 'eq', values: ['legislation'] },
  { kind: 'qualifier', field: 'jurisdiction', negated: false, op: 'eq', values: ['US-WA'] },
]
// Names made of syllables, so that typos and prefixes meet realistic neighbours (a surname one edit from another).
const SYLLABLES = 'ka lo bu char mi den ver sal ton ri ga nel bro wic fen dor mar tis quin hal pe zor lu van sik ob ter ham yel cor'.split(' ')
export const wordOf = (n, syllables) => Array.from({ length: syllables }, (_, position) => SYLLABLES[Math.floor(n / SYLLABLES.length ** position) % SYLLABLES.length]).join('')
/**
 * Synthetic texts of about 20 KB (sentences of 8 to 19 words), for the benchmarks of search with
 * texts: words drawn by rank with probability 1/rank (Zipf) from 27,000 words of `syllables`
 * syllables, `titleWords` among them at ranks 100 to about 2,000 (common in the texts, not as
 * common as their commonest words: at ranks 1 to 110 they were in nearly every passage), from a
 * sequence seeded by `seed` (`reseed` starts it again). `textOnlyWord`: a word no title holds.
 */
export function syntheticTexts(titleWords, { syllables = 3, seed = 13 } = {}) {
  const words = Array.from({ length: 30 ** 3 }, (_, n) => wordOf(n, syllables))
  for (const [n, word] of titleWords.entries()) words.splice(100 + 17 * n, 0, word)
  let state = seed
  const random = () => ((state = (state * 16807) % 2147483647) / 2147483647)
  const word = () => words[Math.min(words.length - 1, Math.floor(words.length ** random()) - 1)]
  const inTitles = new Set(titleWords)
  return {
    textOf() {
      const sentences = []
      let length = 0
      while (length < 20_000) {
        const sentence = Array.from({ length: 8 + Math.floor(random() * 12) }, word).join(' ') + '.'
        sentences.push(sentence)
        length += sentence.length + 1
      }
      return sentences.join(' ')
    },
    word,
    textOnlyWord() {
      for (;;) {
        const drawn = word()
        if (!inTitles.has(drawn)) return drawn
      }
    },
    reseed: (next) => void (state = next),
  }
}

/**
 * Whether entity `n` of `total` has a text, `texts` of them: one in each run of `total / texts`, at
 * a place that moves with the run, not the first: the type and jurisdiction cycles would otherwise
 * give every text the same jurisdiction, and a prefilter on another would hold none.
 */
export function textBearers(total, texts) {
  const stride = Math.floor(total / Math.max(1, texts))
  return (n) => texts > 0 && n % stride === Math.floor(n / stride) % stride && n / stride < texts
}

export const FIRST_NAMES = 'john mary james patricia robert jennifer michael linda william elizabeth david barbara richard susan joseph jessica thomas sarah charles karen amy kamala joe bernie nancy mitch chuck elena sonia ruth'.split(' ')
/** Entity n's surname, one of 20,000. */
export const surnameOf = (n) => wordOf((n * 7919) % 20_000, 3)
const STATES = ['AL', 'AK', 'AZ', 'AR', 'CA', 'CO', 'CT', 'DE', 'FL', 'GA', 'HI', 'ID', 'IL', 'IN', 'IA', 'KS', 'KY', 'LA', 'ME', 'MD', 'MA', 'MI', 'MN', 'MS', 'MO', 'MT', 'NE', 'NV', 'NH', 'NJ', 'NM', 'NY', 'NC', 'ND', 'OH', 'OK', 'OR', 'PA', 'RI', 'SC', 'SD', 'TN', 'TX', 'UT', 'VT', 'VA', 'WA', 'WV', 'WI', 'WY']

/** Entity n: ids in a fixed-width base-36 form so that sort order is n order. */
export const idOf = (n) => `e${n.toString(36).padStart(5, '0')}`
export function recordOf(n) {
  const type = n % 10 < 6 ? 'person' : n % 10 < 9 ? 'legislation' : 'committee'
  return {
    id: idOf(n),
    type,
    title: `${type} number ${n}`,
    name: type === 'person' ? `Person ${n}` : undefined,
    jurisdiction: `US-${STATES[(n * 7919) % STATES.length]}`,
    // Years run in blocks of 7 entities, so that a date range is not correlated with type (n % 10).
    displayDate: `${1900 + (Math.floor(n / 7) % 120)}-0${1 + (n % 9)}-1${n % 10}`,
    status: n % 3 === 0 ? 'former' : 'serving',
    localType: type === 'legislation' ? 'bill' : 'bioguide',
    texts: [],
  }
}

/** The 1,000,000-entity SQLite store that the list benchmarks share (built once). */
export function entities1m(tuning = {}) {
  return cachedSqliteStore('entities-1m', (store) => applyInBatches(store.warehouse, TOTAL, (n) => ({ op: 'upsert', record: recordOf(n) })), tuning)
}

/**
 * The words of the bundled word vectors, most frequent first (GloVe's order): a real vocabulary
 * with real frequencies, for titles drawn as people write them (Zipf's law) rather than from a
 * short list of which every word is common.
 */
export function vocabulary() {
  const buffer = readFileSync(join(ROOT, 'assets/word-vectors.bin'))
  const count = buffer.readUInt32LE(5)
  const dimensions = buffer.readUInt16LE(9)
  const wordsAt = 5 + 4 + 2 + 8 + 8 + 4 * dimensions
  const wordBytes = buffer.readUInt32LE(wordsAt)
  const words = buffer.toString('utf8', wordsAt + 4, wordsAt + 4 + wordBytes).split('\n')
  const ranks = new Uint32Array(buffer.buffer.slice(buffer.byteOffset + wordsAt + 4 + wordBytes, buffer.byteOffset + wordsAt + 4 + wordBytes + 4 * count))
  return words.map((word, row) => ({ word, rank: ranks[row] })).sort((a, b) => a.rank - b.rank).map(({ word }) => word).slice(0, count)
}

/**
 * A catalogue as registries hold them, for the search benchmarks: 60% persons (a given name of the
 * bundled nickname list and one of 50,000 surnames, both drawn by Zipf's law, and a role), 30%
 * bills (6 to 14 words of a 30,000-word vocabulary by Zipf's law), 10% committees; 15 jurisdictions
 * evenly, so that `type:legislation jurisdiction:US-X` keeps 2%. Entity n is drawn from a sequence
 * seeded by n alone: any entity can be made again, in any order, to write a query that finds it.
 */
export function catalogEntities() {
  const states = STATES.slice(0, 15)
  const words = vocabulary().slice(40).filter((word) => /^[a-z]{3,}$/.test(word)).slice(0, 30_000)
  // Given names in a fixed order that is not the alphabet's, so that the most frequent are not all A's.
  const hashOf = (text) => [...text].reduce((hash, letter) => (hash * 31 + letter.charCodeAt(0)) % 1_000_003, 7)
  const givenNames = [...new Set(readFileSync(join(ROOT, 'assets/nicknames/names.csv'), 'utf8').split('\n').slice(1).map((line) => line.split(',')[0]).filter(Boolean))].sort((a, b) => hashOf(a) - hashOf(b))
  const roles = ['Senator', 'Representative', 'Governor', 'Mayor', 'Judge', 'Clerk', 'Commissioner', 'Treasurer', 'Secretary of State', 'Attorney General', 'Council Member', 'Assessor']
  /** Cumulative Zipf weights (1 / (rank + 2)) of `size` items. */
  const zipf = (size) => {
    const cumulative = new Float64Array(size)
    let sum = 0
    for (let rank = 0; rank < size; rank++) cumulative[rank] = sum += 1 / (rank + 2)
    return { cumulative, sum }
  }
  const draw = ({ cumulative, sum }, random) => {
    const target = random() * sum
    let low = 0
    let high = cumulative.length - 1
    while (low < high) {
      const middle = (low + high) >> 1
      if (cumulative[middle] < target) low = middle + 1
      else high = middle
    }
    return low
  }
  const wordWeights = zipf(words.length)
  const givenWeights = zipf(givenNames.length)
  const surnameWeights = zipf(50_000)
  const capitalized = (word) => word[0].toUpperCase() + word.slice(1)
  // 27,000 of three syllables, the rest with a suffix.
  const surnameAt = (index) => `${wordOf(index % 27_000, 3)}${index >= 27_000 ? 'son' : ''}`
  const randomOf = (n) => {
    let seed = (n * 2654435761 + 12345) % 2147483647 || 1
    return () => (seed = (seed * 48271) % 2147483647) / 2147483647
  }
  const titleWords = (random, count) => Array.from({ length: count }, () => words[draw(wordWeights, random)])
  const recordOf = (n) => {
    const random = randomOf(n)
    const type = n % 10 < 6 ? 'person' : n % 10 < 9 ? 'legislation' : 'committee'
    const jurisdiction = `US-${states[Math.floor(random() * states.length)]}`
    const id = `c${n.toString(36).padStart(5, '0')}`
    if (type === 'person') {
      const name = `${capitalized(givenNames[draw(givenWeights, random)])} ${capitalized(surnameAt((draw(surnameWeights, random) * 7919) % 50_000))}`
      return { id, type, name, title: roles[Math.floor(random() * roles.length)], jurisdiction, localType: 'bioguide', texts: [] }
    }
    if (type === 'legislation') return { id, type, title: capitalized(titleWords(random, 6 + Math.floor(random() * 9)).join(' ')), jurisdiction, localType: 'bill', texts: [] }
    return { id, type, title: `Committee on ${titleWords(random, 1)} and ${titleWords(random, 1 + Math.floor(random() * 2)).join(' ')}`, jurisdiction, localType: 'committee', texts: [] }
  }
  return { recordOf, words, states }
}

/**
 * The texts of search-cost.mjs's catalogue with `texts` of its `total` entities given one
 * (`textBearers`): synthetic texts of about 20 KB (`syntheticTexts`) whose words are 27,000 of four
 * syllables, which no title and no surname holds (surnames are of three), and the catalogue's 110
 * commonest title words.
 */
export function catalogTexts(total, texts) {
  const { words } = catalogEntities()
  return { hasText: textBearers(total, texts), titleWords: words.slice(0, 110), ...syntheticTexts(words.slice(0, 110), { syllables: 4 }) }
}

/**
 * The query sets of the search cost benchmarks, `count` distinct queries each, drawn from the
 * catalogue's own entities (`catalogEntities`, the first `total`) with a sequence seeded by `seed`:
 *   - title words: two or three consecutive words of a bill's title;
 *   - title words, 2% prefilter: the same under `type:legislation jurisdiction:<the bill's>`;
 *   - name with a typo: a person's given name and surname, one letter of the surname changed;
 *   - common word: one of the 150 most frequent title words alone (150 at most: each once), beside a
 *     rare word (ranks 5,000 to 25,000), or under a broad qualifier (a type, or one of 15 jurisdictions).
 * The kinds of the last set are shuffled together, so that any slice of it holds them in the same proportions.
 */
export function catalogQuerySets(total, count, seed = 1, texts = null) {
  const { recordOf, words, states } = catalogEntities()
  let state = seed
  const random = () => (state = (state * 48271) % 2147483647) / 2147483647
  const below = (size) => Math.floor(random() * size)
  const entityOf = (type) => {
    for (;;) {
      const record = recordOf(below(total))
      if (record.type === type) return record
    }
  }
  /** `wanted` distinct queries of `make` (which must be able to make that many). */
  const distinct = (wanted, make) => {
    const made = new Set()
    while (made.size < wanted) made.add(make())
    return [...made]
  }
  const titleWords = (record) => {
    const all = record.title.toLowerCase().split(' ')
    const length = 2 + below(2)
    const start = below(all.length - length + 1)
    return all.slice(start, start + length).join(' ')
  }
  const typo = (word) => {
    const at = 1 + below(word.length - 1)
    const letters = 'xqzj'.replace(word[at], '')
    return word.slice(0, at) + letters[below(letters.length)] + word.slice(at + 1)
  }
  const common = () => words[below(150)]
  const broadQualifiers = [...['person', 'legislation', 'committee'].map((type) => `type:${type}`), ...states.map((code) => `jurisdiction:US-${code}`)]
  const alone = words.slice(0, Math.min(150, Math.floor(count / 3)))
  const besideOthers = count - alone.length
  const underQualifier = Math.min(Math.floor(besideOthers / 2), broadQualifiers.length * 150)
  const commonWords = [
    ...alone,
    ...distinct(underQualifier, () => `${broadQualifiers[below(broadQualifiers.length)]} ${common()}`),
    ...distinct(besideOthers - underQualifier, () => (random() < 0.5 ? `${common()} ${words[5000 + below(20_000)]}` : `${words[5000 + below(20_000)]} ${common()}`)),
  ]
  for (let at = commonWords.length - 1; at > 0; at--) {
    const other = below(at + 1)
    ;[commonWords[at], commonWords[other]] = [commonWords[other], commonWords[at]]
  }
  return {
    'title words': distinct(count, () => titleWords(entityOf('legislation'))),
    'title words, 2% prefilter': distinct(count, () => {
      const bill = entityOf('legislation')
      return `type:legislation jurisdiction:${bill.jurisdiction} ${titleWords(bill)}`
    }),
    'name with a typo': distinct(count, () => {
      const [given, surname] = entityOf('person').name.split(' ')
      return `${given} ${typo(surname)}`
    }),
    'common word': commonWords,
    // With texts (`catalogTexts`): one of the title words the texts hold too, beside a word only texts hold.
    ...(texts === null ? {} : { 'a title word and a text word': (texts.reseed(17), distinct(count, () => `${texts.titleWords[below(texts.titleWords.length)]} ${texts.textOnlyWord()}`)) }),
  }
}

/**
 * The search of search-cost.mjs's catalogue of `total` entities (built by its first run), in this
 * process, with the build in `distDirectory`: its SQLite store and its LanceDB index loaded into the
 * resident index (awaited), and the build's `createSearch`, `parseGffs`, nicknames and word relatives.
 */
export async function openCatalogSearch(total, distDirectory) {
  const data = join(DATA_DIR, `search-catalog-${total}`)
  if (!existsSync(data)) throw new Error(`no ${data}: run bench/search-cost.mjs --entities ${total} first`)
  const dist = (path) => import(pathToFileURL(join(resolve(distDirectory), path)).href)
  const { createResidentSearchIndex, createSearch, parseGffs } = await dist('index.js')
  const { createWordVectorEmbedder } = await dist('embedders/index.js')
  const { createSqliteStore: sqliteStoreOf } = await dist('kysely/index.js')
  const { createLancedbSearchIndex } = await dist('lancedb/index.js')
  const { loadNicknames, loadWordRelatives } = await dist('node/index.js')
  const embedder = createWordVectorEmbedder()
  const store = await sqliteStoreOf({ file: join(data, 'registry.sqlite') })
  const behind = await createLancedbSearchIndex({ uri: join(data, 'search'), dimensions: embedder.dimensions })
  let markLoaded
  const loaded = new Promise((done) => (markLoaded = done))
  const resident = await createResidentSearchIndex({ behind, dimensions: embedder.dimensions, onLoaded: markLoaded })
  const { entities, milliseconds } = await loaded
  return { createSearch, parseGffs, embedder, store, resident, entities, milliseconds, nicknames: await loadNicknames(), relatives: await loadWordRelatives() }
}

/**
 * The search floor's FTS5 file (`servers/search-floor.mjs`) at `file`, from `records` ({ id, type,
 * jurisdiction, title, name, text }): each entity's id (unindexed), title, name, and its type and
 * jurisdiction as tokens of a column of their own (`typelegislation jurisdictionusca`) that the
 * prefilter matches and ranking weighs at 0 (FTS5 intersects them with the words: 2 to 4 times faster
 * than a WHERE on the indexed columns of a joined table, which SQLite answers by probing the FTS
 * index once for each row the prefilter keeps). `withTexts`: a column `text` too, of the records' `text`.
 */
export function writeSearchFloor(file, records, { withTexts = false } = {}) {
  const partial = `${file}.partial`
  rmSync(partial, { force: true })
  const db = new Database(partial)
  db.exec(`PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;
    CREATE VIRTUAL TABLE search USING fts5(id UNINDEXED, title, name, qualifiers${withTexts ? ', text' : ''});`)
  const insert = db.prepare(`INSERT INTO search (id, title, name, qualifiers${withTexts ? ', text' : ''}) VALUES (?, ?, ?, ?${withTexts ? ', ?' : ''})`)
  db.transaction(() => {
    for (const { id, type, jurisdiction, title, name, text } of records) {
      const row = [id, title ?? null, name ?? null, `type${type} jurisdiction${(jurisdiction ?? '').replace('-', '')}`]
      insert.run(withTexts ? [...row, text ?? null] : row)
    }
  })()
  db.exec(`INSERT INTO search (search) VALUES ('optimize');`)
  db.close()
  renameSync(partial, file)
}
