// The floor: what a user could write in twenty lines over the registry's own database. One prepared
// statement a request kind (better-sqlite3 over the SQLite file, or a named prepared statement
// through a `pg` Pool), the stored snapshot JSON concatenated into the document, no authentication,
// no validation. `--fastify` serves the same handlers through Fastify.
// Usage: node floor.mjs <data dir> [--database postgres://…] [--fastify]; prints "listening on <url>".
// The data dir holds the rendition blobs, and registry.sqlite unless --database names PostgreSQL.
import { readFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import { join } from 'node:path'
import { parseArgs } from 'node:util'

const { values: options, positionals } = parseArgs({
  allowPositionals: true,
  options: { database: { type: 'string' }, fastify: { type: 'boolean', default: false } },
})
const [data] = positionals

const ENTITY = 'SELECT id, type, state, merged_into, snapshot FROM entities'
const PAGE = `SELECT id, type, snapshot FROM entities WHERE state = 'canonical'`
/** The queries of both back ends, with their parameters in order; `?` becomes `$n` on PostgreSQL. */
const QUERIES = {
  page: `${PAGE} AND id > ? ORDER BY id LIMIT ?`,
  filtered: `${PAGE} AND type = ? AND jurisdiction = ? AND id > ? ORDER BY id LIMIT ?`,
  entity: `${ENTITY} WHERE id = ?`,
  changes: `SELECT seq, entity_id, change_type, snapshot FROM changes WHERE seq > ? AND type = ? AND jurisdiction = ? ORDER BY seq LIMIT ?`,
}

/** Per query name, `(...values) => rows` (an array, or a promise of one). */
async function openQueries(database) {
  if (database === undefined) {
    const { default: Database } = await import('better-sqlite3')
    const db = new Database(join(data, 'registry.sqlite'), { readonly: true })
    return Object.fromEntries(Object.entries(QUERIES).map(([name, text]) => {
      const statement = db.prepare(text)
      return [name, (...values) => statement.all(...values)]
    }))
  }
  // A pool as large as the load's connections, as `pg.Pool`'s default (and so the registry's) is.
  const { default: pg } = await import('pg')
  const pool = new pg.Pool({ connectionString: database, max: 10 })
  return Object.fromEntries(Object.entries(QUERIES).map(([name, text]) => {
    let n = 0
    const query = { name, text: text.replace(/\?/g, () => `$${++n}`) }
    return [name, async (...values) => (await pool.query({ ...query, values })).rows]
  }))
}
const queries = await openQueries(options.database)

const resource = (row) => `{"type":"${row.type ?? 'entity'}","id":"${row.id}","attributes":${row.snapshot}}`
const page = (rows, limit) => `{"data":[${rows.slice(0, limit).map(resource).join(',')}],"meta":{"more":${rows.length > limit}}}`

/** path and query → [status, content type, body]; the bench only sends what it serves. */
async function answer(path, query) {
  const limit = Number(query.get('page[limit]') ?? 10)
  const after = query.get('page[after]') ?? ''
  if (path === '/v1/entities') {
    const filter = query.get('filter')
    if (filter === null) return json(page(await queries.page(after, limit + 1), limit))
    const [type, jurisdiction] = filter.split(' ').map((qualifier) => qualifier.split(':')[1])
    return json(page(await queries.filtered(type, jurisdiction, after, limit + 1), limit))
  }
  if (path === '/v1/entities/changes') {
    const [type, jurisdiction] = query.get('filter').split(' ').map((qualifier) => qualifier.split(':')[1])
    const rows = await queries.changes(Number(after.replace('echg_', '') || 0), type, jurisdiction, limit)
    return json(`{"data":[${rows.map((row) => `{"type":"entity-change","id":"${row.seq}","attributes":${row.snapshot}}`).join(',')}]}`)
  }
  const rendition = /^\/v1\/entities\/(\w+)\/renditions\/(\w+)\.\w+$/.exec(path)
  if (rendition) {
    const [{ snapshot }] = await queries.entity(rendition[1])
    const found = JSON.parse(snapshot).texts.flatMap((text) => text.renditions).find((r) => r.renditionId === rendition[2])
    return [200, found.mime, await readFile(join(data, 'blobs', `sha256-${found.sha256}`))]
  }
  let [row] = await queries.entity(path.slice('/v1/entities/'.length))
  while (row?.state === 'merged') [row] = await queries.entity(row.merged_into)
  return row ? json(`{"data":${resource(row)}}`) : [404, 'application/json', '{}']
}
const json = (body) => [200, 'application/vnd.api+json', body]

let url
if (options.fastify) {
  const { default: Fastify } = await import('fastify')
  const app = Fastify()
  app.get('/*', async (request, reply) => {
    const [path, search = ''] = request.url.split('?')
    const [status, type, body] = await answer(path, new URLSearchParams(search))
    return reply.code(status).type(type).send(body)
  })
  url = await app.listen({ port: 0, host: '127.0.0.1' })
} else {
  const server = createServer(async (request, response) => {
    const { pathname, searchParams } = new URL(request.url, 'http://floor')
    const [status, type, body] = await answer(pathname, searchParams)
    response.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) }).end(body)
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${server.address().port}`
}
console.log(`listening on ${url}`)
