// Bulk import, side by side with a hand-written loader over the same tables in the same run:
// `entity-registry import` (the built CLI, as a user runs it) against better-sqlite3 prepared
// statements on SQLite and COPY (pg-copy-streams) into a staging table on PostgreSQL, both in
// transactions of BATCH lines. Four loads in turn on one store: a fresh file, the same file again,
// the file with 10% of the entities changed, and a file of deletes and merges (a tenth of the
// entities each). Each load runs in a process of its own, so that its peak resident memory is its own.
//
//   node bench/import.mjs [--count 1000000] [--postgres postgres://…] [--only sqlite|postgres] [--write]
//
// The files are built once under bench/.data/import-<count>; --write puts the table into
// bench/README.md between its "bench/import.mjs" markers.
import { spawnSync } from 'node:child_process'
import { createReadStream, createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { createInterface } from 'node:readline'
import { once } from 'node:events'
import { parseArgs } from 'node:util'
import { DATA_DIR, ROOT, idOf, inSchema, machine, recordOf } from './lib.mjs'

const { values: options } = parseArgs({
  options: {
    count: { type: 'string', default: '1000000' },
    postgres: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/test' },
    only: { type: 'string' },
    write: { type: 'boolean', default: false },
    // Internal: run one load of the floor in this process.
    floor: { type: 'string' },
    file: { type: 'string' },
    database: { type: 'string' },
  },
})

/** Lines a transaction, for both loaders (the issue's floor: 10,000). */
const BATCH = 10_000
const CLI = join(ROOT, 'dist/cli/main.js')
const MAX_RSS = join(ROOT, 'test/support/max-rss.cjs')
const CONTRACT = [
  ['type', 'type'],
  ['title', 'title'],
  ['name', 'name'],
  ['displayDate', 'display_date'],
  ['jurisdiction', 'jurisdiction'],
  ['localIdentifier', 'local_identifier'],
  ['localType', 'local_type'],
  ['authority', 'authority'],
  ['status', 'status'],
]
const COLUMNS = CONTRACT.map(([, column]) => column)
const PREVIOUS = COLUMNS.map((column) => `previous_${column}`)
const EMPTY = '{"texts":[]}'

/** Each store's search catching up after its fresh load. */
const catchUps = []

async function compare() {
  const count = Number(options.count)
  const files = await buildFiles(count)
  const rows = []
  if (options.only !== 'postgres') rows.push(...(await runLoads('SQLite', files, sqliteTargets())))
  if (options.only !== 'sqlite') {
    const targets = await postgresTargets(options.postgres, count)
    if (targets === null) console.log(`PostgreSQL skipped: nothing answers at ${options.postgres}`)
    else rows.push(...(await runLoads('PostgreSQL', files, targets)))
  }
  const table = [
    `${count.toLocaleString('en')} entities of bench/lib.mjs's shape, ${BATCH.toLocaleString('en')} lines a transaction (\`import --batch ${BATCH}\`); ${machine()}; ${new Date().toISOString().slice(0, 10)}.`,
    '',
    '| load | entity-registry import | peak RSS | hand-written floor | peak RSS | ratio |',
    '|---|---|---|---|---|---|',
    ...rows.map((row) => `| ${row.load} | ${rate(row.registry)} | ${mb(row.registry.rss)} | ${rate(row.floor)} | ${mb(row.floor.rss)} | ${(row.floor.seconds / row.registry.seconds).toFixed(2)} |`),
    '',
    'Search caught up after the fresh load (`reindex`: the bundled word vectors, LanceDB, texts indexed):',
    '',
    '| store | changes | time | rate | peak RSS |',
    '|---|---|---|---|---|',
    ...catchUps.map((run) => `| ${run.label} | ${run.lines.toLocaleString('en')} | ${run.seconds.toFixed(1)} s | ${rate(run)} | ${mb(run.rss)} |`),
  ].join('\n')
  console.log(`\n${table}`)
  if (options.write) {
    const readme = join(ROOT, 'bench/README.md')
    const text = readFileSync(readme, 'utf8')
    const [start, end] = ['<!-- bench/import.mjs start -->', '<!-- bench/import.mjs end -->']
    const at = text.indexOf(start)
    if (at < 0) throw new Error(`bench/README.md has no ${start} marker`)
    writeFileSync(readme, `${text.slice(0, at + start.length)}\n${table}\n${text.slice(text.indexOf(end))}`)
  }
}

const rate = ({ lines, seconds }) => `${Math.round(lines / seconds).toLocaleString('en')}/s`
const mb = (bytes) => `${Math.round(bytes / 2 ** 20)} MB`

/** The four loads of one store kind: each by entity-registry and by the floor, on stores of their own. */
async function runLoads(label, files, { registryArgs, floorDatabase, cleanup }) {
  const rows = []
  for (const [load, file, lines] of [
    ['fresh', files.fresh, files.count],
    ['the same file again', files.fresh, files.count],
    ['10% changed', files.changed, files.count],
    ['deletes and merges', files.operations, files.operationCount],
  ]) {
    const registry = timedProcess([CLI, 'import', file, '--batch', String(BATCH), ...registryArgs])
    const floor = timedProcess([new URL(import.meta.url).pathname, '--floor', label === 'SQLite' ? 'sqlite' : 'postgres', '--file', file, '--database', floorDatabase])
    for (const [who, result] of [['import', registry], ['floor', floor]]) {
      if (result.code !== 0) throw new Error(`${label} ${load}: ${who} exited with ${result.code}: ${result.stderr}`)
    }
    const row = { load: `${label}, ${load}`, registry: { ...registry, lines }, floor: { ...floor, lines } }
    console.log(`${row.load}: import ${rate(row.registry)} (${mb(registry.rss)}), floor ${rate(row.floor)} (${mb(floor.rss)}): ${registry.stdout.trim()}`)
    rows.push(row)
    if (load === 'fresh') catchUps.push(searchCatchUp(label, registryArgs, lines))
  }
  await cleanup()
  return rows
}

/** Search after a store's fresh load: `reindex` (the bundled word vectors, LanceDB, texts on) until it has every change. */
function searchCatchUp(label, registryArgs, lines) {
  const reindex = timedProcess([CLI, 'reindex', ...registryArgs, '--progress', 'none'])
  if (reindex.code !== 0) throw new Error(`${label}: reindex exited with ${reindex.code}: ${reindex.stderr}`)
  const caughtUp = { label, ...reindex, lines }
  console.log(`${label}: search caught up with ${lines} changes in ${reindex.seconds.toFixed(1)} s (${rate(caughtUp)}, ${mb(reindex.rss)})`)
  return caughtUp
}

function timedProcess(args) {
  const started = performance.now()
  const result = spawnSync(process.execPath, ['--require', MAX_RSS, ...args], { encoding: 'utf8', maxBuffer: 2 ** 28 })
  const seconds = (performance.now() - started) / 1000
  const rss = Number(/max-rss (\d+)/.exec(result.stderr)?.[1] ?? Number.NaN)
  return { code: result.status, seconds, rss, stdout: result.stdout, stderr: result.stderr }
}

function sqliteTargets() {
  const directory = mkdtempSync(join(tmpdir(), 'er-bench-import-'))
  return {
    registryArgs: ['--data', join(directory, 'registry')],
    floorDatabase: join(directory, 'floor.sqlite'),
    cleanup: async () => rmSync(directory, { recursive: true, force: true }),
  }
}

/** Two fresh schemas on the server, made with the store's own migrations; null when none answers. */
async function postgresTargets(url, count) {
  const { default: pg } = await import('pg')
  const admin = new pg.Client({ connectionString: url })
  try {
    await admin.connect()
  } catch {
    return null
  }
  const { createPostgresStore } = await import('../dist/kysely/index.js')
  const schemas = [`bench_import_${count}`, `bench_import_${count}_floor`]
  for (const schema of schemas) {
    await admin.query(`drop schema if exists ${schema} cascade; create schema ${schema}`)
    const store = await createPostgresStore({ connectionString: inSchema(url, schema) })
    await store.close()
  }
  const blobs = mkdtempSync(join(tmpdir(), 'er-bench-import-'))
  return {
    registryArgs: ['--data', blobs, '--database', inSchema(url, schemas[0])],
    floorDatabase: inSchema(url, schemas[1]),
    async cleanup() {
      for (const schema of schemas) await admin.query(`drop schema ${schema} cascade`)
      await admin.end()
      rmSync(blobs, { recursive: true, force: true })
    },
  }
}

/**
 * The files, built once: every entity; every entity with each tenth one's title changed; and
 * deletes (n % 20 = 0) and merges of n % 20 = 10 into the canonical n + 1.
 */
async function buildFiles(count) {
  const directory = join(DATA_DIR, `import-${count}`)
  const files = { count, fresh: join(directory, 'fresh.ndjson'), changed: join(directory, 'changed.ndjson'), operations: join(directory, 'operations.ndjson') }
  files.operationCount = Math.ceil(count / 20) + Math.ceil(Math.max(0, count - 10) / 20)
  if (existsSync(files.operations)) return files
  mkdirSync(directory, { recursive: true })
  const write = async (path, lineOf) => {
    const partial = `${path}.partial`
    const out = createWriteStream(partial)
    for (let n = 0; n < count; n++) {
      const line = lineOf(n)
      if (line !== null && !out.write(`${line}\n`)) await once(out, 'drain')
    }
    out.end()
    await once(out, 'finish')
    renameSync(partial, path)
  }
  await write(files.fresh, (n) => JSON.stringify(recordOf(n)))
  await write(files.changed, (n) => JSON.stringify(n % 10 === 5 ? { ...recordOf(n), title: `changed ${n}` } : recordOf(n)))
  await write(files.operations, (n) =>
    n % 20 === 0 ? JSON.stringify({ op: 'delete', id: idOf(n) }) : n % 20 === 10 && n + 1 < count ? JSON.stringify({ op: 'merge', id: idOf(n), into: idOf(n + 1) }) : null,
  )
  return files
}

/** The public snapshot a hand-written loader keeps: the contract fields present and the texts. */
function snapshotOf(record) {
  const snapshot = { texts: record.texts ?? [] }
  for (const [field] of CONTRACT) if (typeof record[field] === 'string') snapshot[field] = record[field]
  return snapshot
}

/** What a list page serves of a canonical entity, rendered when written, as the store does. */
function resourceOf(id, snapshot) {
  const { type = 'entity', texts, ...attributes } = snapshot
  return JSON.stringify({ type, id, attributes: { ...attributes, texts }, links: { self: `\u0001/v1/entities/${id}` } })
}

const changedKeys = (before, after) => [...CONTRACT.map(([field]) => field), 'texts'].filter((key) => JSON.stringify(before[key]) !== JSON.stringify(after[key]))

async function* lines(file) {
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) if (line !== '') yield line
}

/** better-sqlite3: a prepared read, upsert and change insert a line, BATCH lines a transaction. */
async function sqliteFloor(file, database) {
  const { default: Database } = await import('better-sqlite3')
  if (!existsSync(database)) {
    // The store's own schema, made by the store.
    const { createSqliteStore } = await import('../dist/kysely/index.js')
    await (await createSqliteStore({ file: database })).close()
  }
  const db = new Database(database)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  const read = db.prepare('select state, snapshot from entities where id = ?')
  const entityColumns = ['id', 'state', 'merged_into', ...COLUMNS, 'snapshot', 'private_snapshot', 'resource']
  const upsert = db.prepare(
    `insert into entities (${entityColumns}) values (${entityColumns.map(() => '?')}) on conflict (id) do update set ${entityColumns.slice(1).map((column) => `${column} = excluded.${column}`)}`,
  )
  const merge = db.prepare(`update entities set state = 'merged', merged_into = ?, resource = null where id = ?`)
  const changeColumns = ['entity_id', 'change_type', 'changed_keys', 'merged_into', 'recorded_at', ...COLUMNS, ...PREVIOUS, 'snapshot']
  const change = db.prepare(`insert into changes (${changeColumns}) values (${changeColumns.map(() => '?')})`)
  const fields = (snapshot) => CONTRACT.map(([field]) => snapshot[field] ?? null)
  const record = (entityId, changeType, before, after, mergedInto = null) =>
    change.run(entityId, changeType, JSON.stringify(changedKeys(before, after)), mergedInto, new Date().toISOString(), ...fields(after), ...fields(before), JSON.stringify(after))
  const apply = (line) => {
    const input = JSON.parse(line)
    const previous = read.get(input.id)
    const before = previous?.state === 'canonical' ? JSON.parse(previous.snapshot) : { texts: [] }
    if (input.op === 'delete') {
      if (previous === undefined || previous.state === 'deleted') return
      upsert.run(input.id, 'deleted', null, ...fields({}), EMPTY, '{}', null)
      return record(input.id, 'delete', before, { texts: [] })
    }
    if (input.op === 'merge') {
      if (previous === undefined || read.get(input.into)?.state !== 'canonical') return
      merge.run(input.into, input.id)
      return record(input.id, 'merge', before, JSON.parse(previous.snapshot), input.into)
    }
    const snapshot = snapshotOf(input)
    const json = JSON.stringify(snapshot)
    if (previous?.state === 'canonical' && previous.snapshot === json) return
    const { id, ...rest } = input
    upsert.run(id, 'canonical', null, ...fields(snapshot), json, JSON.stringify(rest), resourceOf(id, snapshot))
    record(id, previous?.state === 'canonical' ? 'update' : 'create', before, snapshot)
  }
  const applyBatch = db.transaction((batch) => batch.forEach(apply))
  let batch = []
  for await (const line of lines(file)) {
    batch.push(line)
    if (batch.length === BATCH) applyBatch.immediate(batch.splice(0))
  }
  applyBatch.immediate(batch)
  db.close()
}

/**
 * pg and pg-copy-streams: BATCH lines a transaction, COPY into a temporary staging table, then a
 * few set-based statements that write the entities that changed and one change row each (in line
 * order within each kind of line).
 */
async function postgresFloor(file, database) {
  const { default: pg } = await import('pg')
  const { from: copyFrom } = await import('pg-copy-streams')
  const { pipeline } = await import('node:stream/promises')
  const { Readable } = await import('node:stream')
  const client = new pg.Client({ connectionString: database })
  await client.connect()
  await client.query(
    `create temporary table staging (ord integer, op text, id text, into_id text, ${COLUMNS.map((column) => `${column} text`)}, snapshot text, private_snapshot text, resource text)`,
  )
  const field = (value) => (value === null || value === undefined ? '\\N' : String(value).replace(/[\\\t\n\r]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c]))
  const rowOf = (line, ord) => {
    const input = JSON.parse(line)
    if (input.op !== undefined) return [ord, input.op, input.id, input.into, ...COLUMNS.map(() => null), null, null, null]
    const snapshot = snapshotOf(input)
    const { id, ...rest } = input
    return [ord, 'upsert', id, null, ...CONTRACT.map(([name]) => snapshot[name]), JSON.stringify(snapshot), JSON.stringify(rest), resourceOf(id, snapshot)]
  }
  const now = `'${new Date().toISOString()}'`
  const keysChanged = `coalesce('[' || concat_ws(',', ${[...CONTRACT.map(([name, column]) => `case when s.${column} is distinct from e.${column} then '"${name}"' end`), `case when (s.snapshot::jsonb -> 'texts') is distinct from (coalesce(e.snapshot, '${EMPTY}')::jsonb -> 'texts') then '"texts"' end`]}) || ']', '[]')`
  const upserts = `
    with incoming as (
      select s.*, e.state as old_state, ${COLUMNS.map((column) => `e.${column} as old_${column}`)}, ${keysChanged} as keys
      from staging s left join entities e on e.id = s.id
      where s.op = 'upsert' and (e.state is distinct from 'canonical' or e.snapshot is distinct from s.snapshot)
    ), written as (
      insert into entities (id, state, merged_into, ${COLUMNS}, snapshot, private_snapshot, resource)
      select id, 'canonical', null, ${COLUMNS}, snapshot, private_snapshot, resource from incoming
      on conflict (id) do update set state = excluded.state, merged_into = null, ${COLUMNS.map((column) => `${column} = excluded.${column}`)},
        snapshot = excluded.snapshot, private_snapshot = excluded.private_snapshot, resource = excluded.resource
    )
    insert into changes (entity_id, change_type, changed_keys, recorded_at, ${COLUMNS}, ${PREVIOUS}, snapshot)
    select id, case when old_state = 'canonical' then 'update' else 'create' end, keys, ${now}, ${COLUMNS},
      ${COLUMNS.map((column) => `case when old_state = 'canonical' then old_${column} end`)}, snapshot
    from incoming order by ord`
  const withdrawals = `
    with target as (
      select s.ord, s.id, e.state, e.snapshot, ${COLUMNS.map((column) => `e.${column}`)} from staging s join entities e on e.id = s.id
      where s.op = 'delete' and e.state <> 'deleted'
    ), written as (
      update entities e set state = 'deleted', merged_into = null, ${COLUMNS.map((column) => `${column} = null`)}, snapshot = '${EMPTY}', private_snapshot = '{}', resource = null
      from target t where e.id = t.id
    )
    insert into changes (entity_id, change_type, changed_keys, recorded_at, ${PREVIOUS}, snapshot)
    select id, 'delete', '[]', ${now}, ${COLUMNS.map((column) => `case when state = 'canonical' then ${column} end`)}, '${EMPTY}' from target order by ord`
  const merges = `
    with target as (
      select s.ord, s.id, s.into_id, e.state, e.snapshot, ${COLUMNS.map((column) => `e.${column}`)}
      from staging s join entities e on e.id = s.id join entities t on t.id = s.into_id and t.state = 'canonical'
      where s.op = 'merge' and e.merged_into is distinct from s.into_id
    ), written as (
      update entities e set state = 'merged', merged_into = t.into_id, resource = null from target t where e.id = t.id
    )
    insert into changes (entity_id, change_type, changed_keys, merged_into, recorded_at, ${COLUMNS}, ${PREVIOUS}, snapshot)
    select id, 'merge', '[]', into_id, ${now}, ${COLUMNS}, ${COLUMNS.map((column) => `case when state = 'canonical' then ${column} end`)}, snapshot from target order by ord`
  const applyBatch = async (batch, first) => {
    await client.query('begin')
    await client.query('truncate staging')
    const rows = batch.map((line, index) => `${rowOf(line, first + index).map(field).join('\t')}\n`)
    await pipeline(Readable.from(rows), client.query(copyFrom('copy staging from stdin')))
    for (const statement of [upserts, withdrawals, merges]) await client.query(statement)
    await client.query('commit')
  }
  let batch = []
  let count = 0
  for await (const line of lines(file)) {
    batch.push(line)
    if (batch.length === BATCH) await applyBatch(batch.splice(0), (count += BATCH) - BATCH)
  }
  await applyBatch(batch, count)
  await client.end()
}

// Last: the helpers above are defined by now.
if (options.floor === 'sqlite') await sqliteFloor(options.file, options.database)
else if (options.floor === 'postgres') await postgresFloor(options.file, options.database)
else await compare()
