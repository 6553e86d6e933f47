// The contract peer: what a competent team would build instead of adopting entity-registry, with the
// same contract. Fastify 5 with @fastify/cors, a bearer-key hook (SHA-256, constant-time compare),
// @fastify/rate-limit (in the process, by key) with its RateLimit headers, the JSON:API envelope with
// absolute links, `Change-Feed-Head`, merges followed with `Content-Location`, renditions with
// ETag, If-None-Match and nosniff; the floor's queries (queries.mjs).
// Usage: node fastify-contract.mjs <data dir> --key KEY [--database postgres://…] [--rate-limit N];
// prints "listening on <url>".
import { createHash, timingSafeEqual } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import cors from '@fastify/cors'
import rateLimit from '@fastify/rate-limit'
import Fastify from 'fastify'
import { openQueries, typeAndJurisdiction } from './queries.mjs'

const { values: options, positionals } = parseArgs({
  allowPositionals: true,
  options: { database: { type: 'string' }, key: { type: 'string' }, 'rate-limit': { type: 'string', default: '600' } },
})
const [data] = positionals
const queries = await openQueries(data, options.database)
const keyHash = createHash('sha256').update(options.key).digest()
const JSON_API = 'application/vnd.api+json'

const app = Fastify()
await app.register(cors, { origin: '*', exposedHeaders: ['Link', 'Content-Location', 'Change-Feed-Head', 'RateLimit', 'RateLimit-Policy', 'Retry-After'] })

/** A JSON:API error document. */
const sendError = (reply, status, code, detail) => reply.code(status).type(JSON_API).send(JSON.stringify({ errors: [{ status: String(status), code, detail }] }))

// Authentication before the limit, which is kept by key.
app.addHook('onRequest', async (request, reply) => {
  const match = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')
  const hash = match && createHash('sha256').update(match[1]).digest()
  if (!hash || !timingSafeEqual(hash, keyHash)) {
    reply.header('WWW-Authenticate', 'Bearer')
    return sendError(reply, 401, 'unauthorized', 'a valid API key is required')
  }
  request.keyId = hash.toString('hex', 0, 8)
})
await app.register(rateLimit, {
  max: Number(options['rate-limit']),
  timeWindow: 60_000,
  keyGenerator: (request) => request.keyId,
  hook: 'preHandler',
  enableDraftSpec: true,
  errorResponseBuilder: (_request, context) => ({ statusCode: 429, errors: [{ status: '429', code: 'rate_limited', detail: `retry after ${context.after}` }] }),
})

const origin = (request) => `${request.protocol}://${request.headers.host}`
const resource = (base, row) => `{"type":"${row.type ?? 'entity'}","id":"${row.id}","attributes":${row.snapshot},"links":{"self":"${base}/v1/entities/${row.id}"}}`
const changeIdOf = (seq) => `echg_${Number(seq).toString(36).padStart(12, '0')}`
const head = (rows) => (rows[0]?.head == null ? {} : { 'Change-Feed-Head': changeIdOf(rows[0].head) })

/** A page of entities: `limit` of the `limit + 1` rows read, links.self and links.next, meta.cursor. */
function sendPage(request, reply, rows, limit) {
  const base = origin(request)
  const shown = rows.slice(0, limit)
  const self = `${base}${request.url}`
  const cursor = shown.at(-1)?.id ?? null
  const query = new URLSearchParams(request.query)
  query.set('page[after]', cursor ?? '')
  const next = rows.length > limit ? `${base}/v1/entities?${query}` : undefined
  if (next) reply.header('Link', `<${next}>; rel="next"`)
  reply.headers(head(rows)).type(JSON_API)
  return `{"links":{"self":${JSON.stringify(self)}${next ? `,"next":${JSON.stringify(next)}` : ''}},"data":[${shown.map((row) => resource(base, row)).join(',')}],"meta":{"cursor":${JSON.stringify(cursor)}}}`
}

const pageLimit = (query) => Number(query['page[limit]'] ?? 100)

app.get('/v1/entities', async (request, reply) => {
  const limit = pageLimit(request.query)
  const after = request.query['page[after]'] ?? ''
  const filter = request.query.filter
  const rows = filter === undefined ? await queries.pageWithHead(after, limit + 1) : await queries.filteredWithHead(...typeAndJurisdiction(filter), after, limit + 1)
  return sendPage(request, reply, rows, limit)
})

app.get('/v1/entities/changes', async (request, reply) => {
  const limit = pageLimit(request.query)
  const after = request.query['page[after]'] ?? ''
  const rows = await queries.changes(Number.parseInt(after.replace('echg_', '') || '0', 36), ...typeAndJurisdiction(request.query.filter), limit)
  const base = origin(request)
  const cursor = rows.length === 0 ? after || null : changeIdOf(rows.at(-1).seq)
  reply.type(JSON_API)
  return `{"links":{"self":${JSON.stringify(base + request.url)}},"data":[${rows.map((row) => `{"type":"entity-change","id":"${changeIdOf(row.seq)}","attributes":${row.snapshot}}`).join(',')}],"meta":{"cursor":${JSON.stringify(cursor)}}}`
})

/** The entity an id stands for, following merges. */
async function resolve(id) {
  let [row] = await queries.entity(id)
  while (row?.state === 'merged') [row] = await queries.entity(row.merged_into)
  return row?.state === 'canonical' ? row : undefined
}

app.get('/v1/entities/:id', async (request, reply) => {
  const row = await resolve(request.params.id)
  if (!row) return sendError(reply, 404, 'not_found', `entity ${request.params.id} was not found`)
  const base = origin(request)
  if (row.id !== request.params.id) reply.header('Content-Location', `${base}/v1/entities/${row.id}`)
  reply.type(JSON_API)
  return `{"links":{"self":"${base}/v1/entities/${request.params.id}"},"data":${resource(base, row)}}`
})

app.get('/v1/entities/:id/renditions/:file', async (request, reply) => {
  const row = await resolve(request.params.id)
  const renditionId = request.params.file.split('.')[0]
  const rendition = row && JSON.parse(row.snapshot).texts?.flatMap((text) => text.renditions).find((candidate) => candidate.renditionId === renditionId)
  if (!rendition) return sendError(reply, 404, 'not_found', 'no such rendition')
  const etag = `"${rendition.sha256}"`
  reply.header('ETag', etag).header('X-Content-Type-Options', 'nosniff')
  if (request.headers['if-none-match'] === etag) return reply.code(304).send()
  if (/html|xml/.test(rendition.mime)) reply.header('Content-Security-Policy', 'sandbox')
  return reply.type(rendition.mime).send(await readFile(join(data, 'blobs', `sha256-${rendition.sha256}`)))
})

console.log(`listening on ${await app.listen({ port: 0, host: '127.0.0.1' })}`)
