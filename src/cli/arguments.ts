import { parseArgs, type ParseArgsConfig } from 'node:util'
import type { Invocation, KeysInvocation } from './invocation.js'
import { PROGRESS_FORMATS } from './progress.js'
import type { DeleteLimit } from '../warehouse/import.js'
import { EMBEDDER_NAMES, parseEmbedderName } from '../node/embedder-name.js'
import { SEARCH_IN_DATABASE } from '../node/search-in-database.js'
import type { DataOptions } from '../node/data-dir.js'
import { UsageError } from './usage-error.js'
import { LOG_FORMATS, LOG_LEVELS } from '../telemetry/log-levels.js'

/** The most lines a transaction may take: a batch is held in memory until it commits. */
const MAX_BATCH = 100_000

const DATA_HELP = `  --data DIR        data directory: the SQLite file registry.sqlite and the rendition blobs
                    (blobs/); created when missing (default ./data)
  --database URL    where the entities live instead of DIR/registry.sqlite: a SQLite file path,
                    postgres://user@host/db (or postgresql://), or pglite:DIR (PGlite; pglite:
                    alone keeps it in memory).
  --blobs URL       where rendition bytes live instead of DIR/blobs: a directory, or
                    s3://bucket/prefix on S3-compatible storage (settings from AWS_REGION,
                    AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL, and the AWS credentials variables)
  --pool-size N     with a postgres:// --database: the most connections this process opens to it
                    (default 10); a request that finds them all busy waits up to 2 s for one, then
                    answers 503 with Retry-After. Works through a transaction pooler (PgBouncer,
                    RDS Proxy, Supavisor) as directly.
  -h, --help        this help`

const PROGRESS_HELP = `  --progress F      line (default): one line on stderr when it is a terminal, redrawn: count, rate,
                    and where the size is known percent and time left; json: one JSON object a
                    second on stderr wherever it goes (see docs/guides/loading.md); none`

const SEARCH_HELP = `  --search DIR      the search index (LanceDB): a directory or a URI such as s3://bucket/path
                    (default DIR/search of --data); or "postgres": inside the --database
                    (postgres://… or pglite:), shared by every instance over it (needs pg_trgm,
                    and pgvector unless --embedder none)`

const INDEX_TEXTS_HELP = `  --no-index-texts  search titles and names only, not the text of the renditions (HTML, plain text)`
const EMBEDDER_HELP = `  --embedder NAME   words (default: the bundled word vectors) or transformers:DIR (a transformers.js
                    model in DIR; install @huggingface/transformers), or none (with --search
                    postgres: full text and names alone, no pgvector needed). Another embedder
                    than the index was built with needs "reindex --embedder NAME" first.`

const HELP = {
  general: `entity-registry: publish a warehouse of entities as a read-only JSON:API

Usage:
  entity-registry serve [options]              serve the API over HTTP
  entity-registry import FILE [options]        apply an NDJSON file (or - for stdin; gzip or not)
  entity-registry reindex [options]            rebuild the search index from the change feed
  entity-registry keys create --org NAME [options]
                                               create an organization's API key, print it once
  entity-registry keys list|revoke [options]   list keys, revoke one or an organization's
  entity-registry orgs list [options]          list organizations and how many keys they have
  entity-registry help [COMMAND]               a command's options (also: COMMAND --help)
  entity-registry --version

Options of every command:
${DATA_HELP}`,
  serve: `Usage: entity-registry serve [options]

Serves the entities as a read-only JSON:API and prints "listening on http://HOST:PORT".

Options:
${DATA_HELP}
  --read-database URL
                    a streaming replica of the PostgreSQL --database (postgres://…): every read
                    goes there (pages, gets, facets, the feed, search with --search postgres, key
                    lookups); writes, and a key the replica does not know yet, go to --database
  --max-replica-lag S
                    with --read-database: /ready fails while the replica is more than S seconds
                    behind the primary (default 30)
  --port N          port to listen on, 0 to 65535; 0 picks a free one (default 8080)
  --host H          address to listen on (default 127.0.0.1)
  --api-key KEY     an accepted API key (repeatable); also ENTITY_REGISTRY_API_KEYS=k1,k2 and keys
                    made by "keys create". With none at all, serve creates one and prints it once.
  --rate-limit N    requests per minute per key; 0 turns limiting off (default 600)
  --rate-limit-scope key|org
                    count the rate limit for each key (default) or for all the keys of an
                    organization together
  --auth-failure-limit N
                    requests with a missing or wrong key allowed per minute from one client
                    address; beyond, its wrong keys get 429 until it slows down, its valid
                    keys are still served; 0: no limit (default 60)
  --redis URL       keep the rate limit in Redis (redis://host:6379), shared by every instance
  --redis-failure open|closed
                    while Redis is away: let requests through uncounted (open, the default) or
                    refuse them with 503 rate_limit_unavailable (closed)
  --demo            import the bundled demo data when the store is empty
  --base-url URL    public http(s) address the API is reached at, links are built on it
                    (default: taken from each request)
  --trust-proxy     take the public host from X-Forwarded-Host / X-Forwarded-Proto
  --no-explorer     do not serve the explorer, the page to browse the registry at / and /explore
  --admin-port N    also serve /live, /ready and /metrics on this port, with no key (off unless given)
  --admin-host H    address of the admin listener (default 127.0.0.1)
  --log LEVEL       fatal, error, warn, info (default: a line per request), debug, trace or silent
  --log-format F    json (default: one JSON object a line) or pretty (for people)
  --send-timeout S  close a response whose client has read nothing for S seconds (default 60)
  --shutdown-timeout S
                    on SIGTERM or SIGINT, how long requests in flight may take to finish (default 10);
                    long-polls and event streams of the change feed are answered or ended at once
  --max-waiting N   long-polls (waitSeconds) and event streams of the change feed waiting at once at
                    most; past it they get 503 too_many_waiting with Retry-After (default 10000)
${SEARCH_HELP}
                    The index follows the change feed in the background. "none": search switched
                    off (/v1/search answers 404 search_disabled).
${EMBEDDER_HELP}
${INDEX_TEXTS_HELP}
  --no-search-in-memory
                    search the index itself alone (LanceDB on disk, or inside PostgreSQL): by
                    default serve also keeps its terms, the fields prefilters name and the vectors
                    in memory, where search costs a fifth of the CPU or less (500 to 800 MB more
                    at 1,000,000 entities); over PostgreSQL, each instance follows what the
                    indexing one writes there
  --no-word-relatives
                    search the typed words alone: by default a query whose words no entity's
                    title, name or identifier holds is searched by their WordNet relatives too
                    ("military" finds the Armed Services committees)
  --no-places       search the typed words alone: by default a query that names a US state
                    ("Buckeye State senators", "TX senator") ranks its people higher`,
  reindex: `Usage: entity-registry reindex [options]

Rebuilds the search index from the store's change feed, showing progress and rate (needed after a
change of embedder). Stop the server that keeps the same index first: one writer per index.

Options:
${DATA_HELP}
${SEARCH_HELP}
${EMBEDDER_HELP}
${INDEX_TEXTS_HELP}
${PROGRESS_HELP}`,
  import: `Usage: entity-registry import FILE [options]

Applies an NDJSON file: each line an entity record, or {"op":"delete"|"drain","id"} or
{"op":"merge","id","into"}. FILE "-" reads standard input; gzip-compressed input (FILE.ndjson.gz, or
gzip on standard input) is decompressed as it streams. Rendition file paths are relative to FILE's
directory (the working directory for standard input). A rejected line is reported on stderr with its
number and nothing of it is written; the other lines apply. On a terminal, progress is shown on stderr.
Exit code: 0 all lines applied, 1 some line rejected (or the input broke off), 2 bad usage, no such
file, or a full snapshot refused.

Options:
  --batch N         lines applied per transaction, 1 to ${MAX_BATCH.toLocaleString('en-US')} (default 500)
  --full            FILE is the whole warehouse: after its lines apply, every entity it does not name
                    is deleted (a delete change each). Its ids are read first (standard input is
                    copied to a temporary file for that); nothing changes if it would delete more
                    than --max-delete, or if a line names no id.
  --max-delete N|P% with --full: the most entities it may delete, as a number (300) or a percentage
                    of the entities in the store (25%); default 10%
${PROGRESS_HELP}
${DATA_HELP}`,
  keys: `Usage: entity-registry keys create --org NAME [--label TEXT] [--expires WHEN] [options]
       entity-registry keys list [--org NAME] [--json] [options]
       entity-registry keys revoke ID [options]
       entity-registry keys revoke --org NAME [options]

create  makes a key of organization NAME (the organization is made with its first key), prints it
        once on standard output, and keeps only its SHA-256 hash.
list    shows each key's public id (its first 11 characters), organization, label, created, expires,
        last used (written within a second of a key's first use, then at most once a minute) and
        state (active, expired, revoked); never the key or its hash.
revoke  revokes the key with public id ID, or every key of an organization. A running server
        refuses a revoked key within 5 seconds; an expired one at once.
Key creation and revocation are logged on standard error as JSON lines (with the public id only).

Options:
  --org NAME        the organization: 1 to 64 letters, digits, ".", "_" or "-"
  --label TEXT      what the key is for (create)
  --expires WHEN    when the key stops working (create): 90d, 12h, 30m or 45s from now, or a date
                    such as 2027-06-30 or 2027-06-30T12:00:00Z (default: never)
  --json            list as a JSON array of { id, org, label, createdAt, expiresAt, lastUsedAt, state }
${DATA_HELP}`,
  orgs: `Usage: entity-registry orgs list [--json] [options]

Lists the organizations (made by "keys create --org NAME") with their active and total keys.

Options:
  --json            as a JSON array of { name, createdAt, activeKeys, keys }
${DATA_HELP}`,
}

type Options = NonNullable<ParseArgsConfig['options']>

const DATA_OPTIONS = {
  data: { type: 'string', default: './data' },
  database: { type: 'string' },
  blobs: { type: 'string' },
  'pool-size': { type: 'string' },
} satisfies Options

const SERVE_OPTIONS = {
  ...DATA_OPTIONS,
  'read-database': { type: 'string' },
  'max-replica-lag': { type: 'string' },
  port: { type: 'string', default: '8080' },
  host: { type: 'string', default: '127.0.0.1' },
  'api-key': { type: 'string', multiple: true, default: [] },
  'rate-limit': { type: 'string', default: '600' },
  'rate-limit-scope': { type: 'string', default: 'key' },
  'auth-failure-limit': { type: 'string', default: '60' },
  demo: { type: 'boolean', default: false },
  'base-url': { type: 'string' },
  'trust-proxy': { type: 'boolean', default: false },
  'no-explorer': { type: 'boolean', default: false },
  'no-index-texts': { type: 'boolean', default: false },
  'no-search-in-memory': { type: 'boolean', default: false },
  'no-word-relatives': { type: 'boolean', default: false },
  'no-places': { type: 'boolean', default: false },
  search: { type: 'string' },
  embedder: { type: 'string' },
  redis: { type: 'string' },
  'redis-failure': { type: 'string', default: 'open' },
  'admin-port': { type: 'string' },
  'admin-host': { type: 'string', default: '127.0.0.1' },
  log: { type: 'string', default: 'info' },
  'log-format': { type: 'string', default: 'json' },
  'send-timeout': { type: 'string', default: '60' },
  'shutdown-timeout': { type: 'string', default: '10' },
  'max-waiting': { type: 'string', default: '10000' },
} satisfies Options

const PROGRESS_OPTION = { progress: { type: 'string', default: 'line' } } satisfies Options

const IMPORT_OPTIONS = { ...DATA_OPTIONS, ...PROGRESS_OPTION, batch: { type: 'string' }, full: { type: 'boolean', default: false }, 'max-delete': { type: 'string' } } satisfies Options

const REINDEX_OPTIONS = { ...DATA_OPTIONS, ...PROGRESS_OPTION, search: { type: 'string' }, embedder: { type: 'string' }, 'no-index-texts': { type: 'boolean', default: false } } satisfies Options

const KEYS_OPTIONS = { ...DATA_OPTIONS, org: { type: 'string' }, label: { type: 'string' }, expires: { type: 'string' }, json: { type: 'boolean', default: false } } satisfies Options

/** The options each command's parser accepts (`orgs` shares `keys`'s): the docs' test checks its help names them all. */
export const COMMAND_OPTIONS = { serve: SERVE_OPTIONS, import: IMPORT_OPTIONS, reindex: REINDEX_OPTIONS, keys: KEYS_OPTIONS }

type CommandName = 'serve' | 'import' | 'reindex' | 'keys' | 'orgs'
const COMMANDS: CommandName[] = ['serve', 'import', 'reindex', 'keys', 'orgs']

/** Reads the command line; throws a UsageError that names what is wrong. */
export function parseInvocation(argv: string[], environment: NodeJS.ProcessEnv = process.env, now = new Date()): Invocation {
  const [first, ...rest] = argv
  if (first === undefined) throw new UsageError('name a command: serve, import, reindex, keys or orgs (see entity-registry help)')
  if (first === '--version') return { command: 'version' }
  if (first === '--help' || first === '-h') return { command: 'help', text: HELP.general }
  if (first === 'help') {
    if (rest.length === 0) return { command: 'help', text: HELP.general }
    return { command: 'help', text: HELP[commandNamed(rest[0]!)] }
  }
  const command = commandNamed(first)
  if (rest.includes('--help') || rest.includes('-h')) return { command: 'help', text: HELP[command] }
  switch (command) {
    case 'serve': {
      const { values, positionals } = parse(command, rest, SERVE_OPTIONS)
      if (positionals.length > 0) throw new UsageError(`serve takes no arguments, not "${positionals[0]}" (see entity-registry help serve)`)
      const environmentKeys = (environment.ENTITY_REGISTRY_API_KEYS ?? '').split(',').map((key) => key.trim())
      checkSearch(values)
      return {
        command,
        options: {
          ...dataOptions(values),
          ...replicaOptions(values),
          port: port(values.port),
          host: values.host,
          apiKeys: [...values['api-key'], ...environmentKeys].filter((key) => key !== ''),
          rateLimit: wholeNumber(values['rate-limit'], '--rate-limit'),
          rateLimitScope: oneOf(values['rate-limit-scope'], '--rate-limit-scope', ['key', 'org'] as const),
          authFailureLimit: wholeNumber(values['auth-failure-limit'], '--auth-failure-limit'),
          demo: values.demo,
          ...(values['base-url'] === undefined ? {} : { baseUrl: baseUrl(values['base-url']) }),
          trustProxy: values['trust-proxy'],
          explorer: !values['no-explorer'],
          ...(values['no-index-texts'] ? { indexTexts: false } : {}),
          ...(values['no-search-in-memory'] ? { searchInMemory: false } : {}),
          ...(values['no-word-relatives'] ? { wordRelatives: false } : {}),
          ...(values['no-places'] ? { places: false } : {}),
          ...(values.search === undefined ? {} : { search: values.search }),
          ...(values.embedder === undefined ? {} : { embedder: embedder(values.embedder) }),
          ...(values.redis === undefined ? {} : { redis: values.redis }),
          redisFailure: oneOf(values['redis-failure'], '--redis-failure', ['open', 'closed'] as const),
          ...(values['admin-port'] === undefined ? {} : { adminPort: port(values['admin-port'], '--admin-port') }),
          adminHost: values['admin-host'],
          logLevel: oneOf(values.log, '--log', LOG_LEVELS),
          logFormat: oneOf(values['log-format'], '--log-format', LOG_FORMATS),
          sendTimeoutMs: seconds(values['send-timeout'], '--send-timeout') * 1000,
          shutdownTimeoutMs: seconds(values['shutdown-timeout'], '--shutdown-timeout') * 1000,
          maxWaiting: wholeNumber(values['max-waiting'], '--max-waiting'),
        },
      }
    }
    case 'reindex': {
      const { values, positionals } = parse(command, rest, REINDEX_OPTIONS)
      if (positionals.length > 0) throw new UsageError(`reindex takes no arguments, not "${positionals[0]}" (see entity-registry help reindex)`)
      checkSearch(values)
      return {
        command,
        data: {
          ...dataOptions(values),
          ...(values.search === undefined ? {} : { search: indexToRebuild(values.search) }),
          ...(values.embedder === undefined ? {} : { embedder: embedder(values.embedder) }),
          ...(values['no-index-texts'] ? { indexTexts: false } : {}),
          progress: oneOf(values.progress, '--progress', PROGRESS_FORMATS),
        },
      }
    }
    case 'import': {
      const { values, positionals } = parse(command, rest, IMPORT_OPTIONS)
      if (positionals.length !== 1) {
        throw new UsageError(
          positionals.length === 0
            ? 'import needs the NDJSON file to apply, or - for standard input (see entity-registry help import)'
            : `import takes one file, not also "${positionals[1]}"`,
        )
      }
      if (values['max-delete'] !== undefined && !values.full) throw new UsageError('--max-delete limits a full snapshot: give --full too')
      const input = {
        source: positionals[0]!,
        progress: oneOf(values.progress, '--progress', PROGRESS_FORMATS),
        ...(values.batch === undefined ? {} : { batchSize: batchSize(values.batch) }),
        ...(values.full ? { full: values['max-delete'] === undefined ? {} : { maxDelete: deleteLimit(values['max-delete']) } } : {}),
      }
      return { command, input, data: dataOptions(values) }
    }
    case 'keys':
    case 'orgs':
      return keysInvocation(command, rest, now)
  }
}

/** `keys create|list|revoke` and `orgs list`: each takes only the options that mean something to it. */
function keysInvocation(command: 'keys' | 'orgs', args: string[], now: Date): KeysInvocation {
  const { values, positionals } = parse(command, args, KEYS_OPTIONS)
  const [subcommand, ...operands] = positionals
  const invocation = `${command} ${subcommand ?? ''}`.trim()
  const allowed: Record<string, string[]> = { 'keys create': ['org', 'label', 'expires'], 'keys list': ['org', 'json'], 'keys revoke': ['org'], 'orgs list': ['json'] }
  if (allowed[invocation] === undefined) {
    const subcommands = Object.keys(allowed).filter((name) => name.startsWith(command)).map((name) => `"${name}"`).join(', ')
    throw new UsageError(`${command} takes ${subcommands}${subcommand === undefined ? '' : `, not "${invocation}"`} (see entity-registry help ${command})`)
  }
  const given = (['org', 'label', 'expires', 'json'] as const).filter((name) => values[name] !== undefined && values[name] !== false)
  const stray = given.find((name) => !allowed[invocation]!.includes(name))
  if (stray !== undefined) throw new UsageError(`${invocation} takes no --${stray} (see entity-registry help ${command})`)
  const data = dataOptions(values)
  switch (invocation) {
    case 'keys create':
      if (operands.length > 0) throw new UsageError(`keys create takes no arguments, not "${operands[0]}"`)
      if (values.org === undefined) throw new UsageError('keys create needs --org NAME: the organization the key belongs to')
      return {
        command: invocation,
        data,
        org: values.org,
        ...(values.label === undefined ? {} : { label: values.label }),
        ...(values.expires === undefined ? {} : { expiresAt: expiry(values.expires, now) }),
      }
    case 'keys list':
      if (operands.length > 0) throw new UsageError(`keys list takes no arguments, not "${operands[0]}"`)
      return { command: invocation, data, json: values.json, ...(values.org === undefined ? {} : { org: values.org }) }
    case 'keys revoke':
      if (operands.length + (values.org === undefined ? 0 : 1) !== 1) throw new UsageError('keys revoke takes one key id, or --org NAME for all of its keys')
      return { command: invocation, data, which: values.org === undefined ? { id: operands[0]! } : { org: values.org } }
    default:
      if (operands.length > 0) throw new UsageError(`orgs list takes no arguments, not "${operands[0]}"`)
      return { command: 'orgs list', data, json: values.json }
  }
}

/** `YYYY-MM-DD` names a day that exists (Date would take February 30th as March 2nd). */
function isCalendarDay(text: string): boolean {
  const [year, month, day] = text.split('-').map(Number) as [number, number, number]
  return new Date(Date.UTC(year, month - 1, day)).toISOString().slice(0, 10) === text
}

const DURATION_UNITS_MS = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 }

/** `--expires`: a duration from now (90d, 12h, 30m, 45s) or a date, which must be in the future. */
function expiry(value: string, now: Date): Date {
  const duration = /^(\d{1,6})([dhms])$/.exec(value)
  const date = duration
    ? new Date(now.getTime() + Number(duration[1]) * DURATION_UNITS_MS[duration[2] as keyof typeof DURATION_UNITS_MS])
    : /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/.test(value) && isCalendarDay(value.slice(0, 10))
      ? new Date(value)
      : null
  if (date === null || Number.isNaN(date.getTime())) {
    throw new UsageError(`--expires takes a duration (90d, 12h, 30m, 45s) or a date (2027-06-30, 2027-06-30T12:00:00Z), not "${value}"`)
  }
  if (date.getTime() <= now.getTime()) throw new UsageError(`--expires ${value} is in the past; a key must expire in the future`)
  return date
}

function commandNamed(word: string): CommandName {
  if ((COMMANDS as string[]).includes(word)) return word as CommandName
  throw new UsageError(`unknown command "${word}": use serve, import, reindex, keys or orgs (see entity-registry help)`)
}

/** node:util's parser, its errors cut to their first sentence ("Unknown option '--x'"). */
function parse<T extends Options>(command: string, args: string[], options: T) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true })
  } catch (error) {
    const sentence = (error as Error).message.split(/\.(\s|$)/)[0]
    throw new UsageError(`${command}: ${sentence} (see entity-registry help ${command})`)
  }
}

function dataOptions(values: { data: string; database?: string | undefined; blobs?: string | undefined; 'pool-size'?: string | undefined }): DataOptions {
  return {
    data: values.data,
    ...(values.database === undefined ? {} : { database: database(values.database) }),
    ...(values['pool-size'] === undefined ? {} : { poolSize: poolSize(values['pool-size']) }),
    ...(values.blobs === undefined ? {} : { blobs: blobs(values.blobs) }),
  }
}

function blobs(value: string): string {
  if (value === '') throw new UsageError('--blobs needs a directory or s3://bucket/prefix')
  if (ANY_SCHEME.test(value) && !/^s3:\/\/[^/]+/.test(value)) {
    throw new UsageError(`--blobs: ${ANY_SCHEME.exec(value)![0]} is not supported; use a directory or s3://bucket/prefix`)
  }
  return value
}

/** Schemes the stores understand; any other `scheme:` would otherwise name a SQLite file. */
const DATABASE_SCHEMES = /^(postgres|postgresql):\/\/|^pglite:/i
// Two letters at least: `C:\data\registry.sqlite` is a Windows path, not a scheme.
const ANY_SCHEME = /^[a-z][a-z0-9+.-]+:/i

function database(value: string): string {
  if (value === '') throw new UsageError('--database needs a SQLite file path, postgres://… or pglite:DIR')
  if (ANY_SCHEME.test(value) && !DATABASE_SCHEMES.test(value)) {
    const scheme = ANY_SCHEME.exec(value)![0]
    throw new UsageError(`--database: ${scheme} is not supported; use a SQLite file path, postgres://… or pglite:DIR`)
  }
  return value
}

/** `--read-database` and `--max-replica-lag`: a replica of a PostgreSQL `--database`, and how far behind it may be. */
function replicaOptions(values: { database?: string | undefined; 'read-database'?: string | undefined; 'max-replica-lag'?: string | undefined }) {
  const replica = values['read-database']
  const maxLag = values['max-replica-lag']
  if (replica === undefined) {
    if (maxLag !== undefined) throw new UsageError('--max-replica-lag bounds the lag of the replica --read-database names: give --read-database too')
    return {}
  }
  if (!POSTGRES_URL.test(replica)) throw new UsageError(`--read-database takes a postgres:// or postgresql:// URL of a streaming replica, not "${replica}"`)
  if (!POSTGRES_URL.test(values.database ?? '')) throw new UsageError('--read-database reads from a replica of the PostgreSQL database: it needs --database postgres://… (the primary)')
  return { readDatabase: replica, ...(maxLag === undefined ? {} : { maxReplicaLagSeconds: seconds(maxLag, '--max-replica-lag') }) }
}

const POSTGRES_URL = /^postgres(ql)?:\/\/./i

/** `none` switches search off when serving; there is then nothing to rebuild. */
function indexToRebuild(value: string): string {
  if (value !== 'none') return value
  throw new UsageError(`reindex needs a search index: --search takes a directory, a LanceDB URI or ${SEARCH_IN_DATABASE}, not "none"`)
}

/** The index inside the database needs a PostgreSQL or PGlite one; no vectors, that index. */
function checkSearch(values: { database?: string | undefined; search?: string | undefined; embedder?: string | undefined }): void {
  const inDatabase = values.search === SEARCH_IN_DATABASE
  if (inDatabase && !DATABASE_SCHEMES.test(values.database ?? '')) {
    throw new UsageError(`--search ${SEARCH_IN_DATABASE} keeps the index in the store's database: it needs --database postgres://… or pglite:DIR (a directory named ${SEARCH_IN_DATABASE}: ./${SEARCH_IN_DATABASE})`)
  }
  if (values.embedder === 'none' && !inDatabase) throw new UsageError(`--embedder none (no vectors) works only with the index inside the database: --search ${SEARCH_IN_DATABASE}`)
}

function embedder(value: string): string {
  if (parseEmbedderName(value) !== null) return value
  throw new UsageError(`--embedder takes ${EMBEDDER_NAMES}, not "${value}"`)
}

function wholeNumber(value: string, option: string): number {
  if (!/^\d+$/.test(value)) throw new UsageError(`${option} takes a whole number, not "${value}"`)
  return Number(value)
}

function poolSize(value: string): number {
  const number = /^\d+$/.test(value) ? Number(value) : 0
  if (number < 1) throw new UsageError(`--pool-size takes a whole number of connections, 1 or more, not "${value}"`)
  return number
}

function batchSize(value: string): number {
  const number = /^\d+$/.test(value) ? Number(value) : 0
  if (number < 1 || number > MAX_BATCH) throw new UsageError(`--batch takes a whole number from 1 to ${MAX_BATCH}, not "${value}"`)
  return number
}

/** `--max-delete`: a number of entities (300) or a percentage of the canonical entities (25%, 2.5%). */
function deleteLimit(value: string): DeleteLimit {
  if (/^\d+$/.test(value)) return { entities: Number(value) }
  const percent = /^\d+(\.\d+)?%$/.test(value) ? Number(value.slice(0, -1)) : Number.NaN
  if (percent <= 100) return { percent }
  throw new UsageError(`--max-delete takes a number of entities (300) or a percentage from 0% to 100% (25%), not "${value}"`)
}

function port(value: string, option = '--port'): number {
  const number = wholeNumber(value, option)
  if (number > 65_535) throw new UsageError(`${option} takes a port number from 0 to 65535, not "${value}"`)
  return number
}

function oneOf<T extends string>(value: string, option: string, allowed: readonly T[]): T {
  if ((allowed as readonly string[]).includes(value)) return value as T
  throw new UsageError(`${option} takes ${allowed.join(', ')}, not "${value}"`)
}

/** A positive number of seconds (fractions allowed), at most a day. */
function seconds(value: string, option: string): number {
  const number = /^\d+(\.\d+)?$/.test(value) ? Number(value) : Number.NaN
  if (!(number > 0 && number <= 86_400)) throw new UsageError(`${option} takes a number of seconds above 0, up to 86400, not "${value}"`)
  return number
}

function baseUrl(value: string): string {
  const url = URL.canParse(value) ? new URL(value) : null
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new UsageError(`--base-url takes an absolute http(s) address such as https://api.example.org/registry, not "${value}"`)
  }
  return value
}
