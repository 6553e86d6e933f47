// The floor: what a user could write in twenty lines over the registry's own database. One prepared
// statement a request kind (queries.mjs), the stored snapshot JSON concatenated into the document,
// no authentication, no validation. `--fastify` serves the same handlers through Fastify.
// Usage: node floor.mjs <data dir> [--database postgres://…] [--fastify]; prints "listening on <url>".
// The data dir holds the rendition blobs, and registry.sqlite unless --database names PostgreSQL.
import { readFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { openQueries, typeAndJurisdiction } from './queries.mjs'

const { values: options, positionals } = parseArgs({
  allowPositionals: true,
  options: { database: { type: 'string' }, fastify: { type: 'boolean', default: false }, links: { type: 'boolean', default: false } },
})
const [data] = positionals

const queries = await openQueries(data, options.database)

// --links: the contract's bytes on a list page (an absolute self link a resource, the page's self and next), nothing else of it.
let origin = ''
const resource = options.links
  ? (row) => `{"type":"${row.type ?? 'entity'}","id":"${row.id}","attributes":${row.snapshot},"links":{"self":"${origin}/v1/entities/${row.id}"}}`
  : (row) => `{"type":"${row.type ?? 'entity'}","id":"${row.id}","attributes":${row.snapshot}}`
const page = (rows, limit, query) => {
  const data = rows.slice(0, limit).map(resource).join(',')
  if (!options.links) return `{"data":[${data}],"meta":{"more":${rows.length > limit}}}`
  let nextLink = ''
  if (rows.length > limit) {
    const next = new URLSearchParams(query)
    next.set('page[after]', rows[limit - 1].id)
    nextLink = `,"next":"${origin}/v1/entities?${next}"`
  }
  return `{"links":{"self":"${origin}/v1/entities?${query}"${nextLink}},"data":[${data}],"meta":{"more":${rows.length > limit}}}`
}

/** path and query → [status, content type, body]; the bench only sends what it serves. */
async function answer(path, query) {
  const limit = Number(query.get('page[limit]') ?? 10)
  const after = query.get('page[after]') ?? ''
  if (path === '/v1/entities') {
    const filter = query.get('filter')
    if (filter === null) return json(page(await queries.page(after, limit + 1), limit, query))
    const [type, jurisdiction] = typeAndJurisdiction(filter)
    return json(page(await queries.filtered(type, jurisdiction, after, limit + 1), limit, query))
  }
  if (path === '/v1/entities/changes') {
    const [type, jurisdiction] = typeAndJurisdiction(query.get('filter'))
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
origin = url
console.log(`listening on ${url}`)
