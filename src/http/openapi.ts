import { z } from 'zod'
import {
  changesDocumentSchema,
  entityChangeResourceSchema,
  entityCollectionDocumentSchema,
  entityDocumentSchema,
  entityResourceSchema,
  errorDocumentSchema,
  facetsDocumentSchema,
  searchDocumentSchema,
} from '../contract/schemas.js'
import { FACET_FIELDS } from '../contract/fields.js'
import { JSON_API_MEDIA_TYPE } from './media-type.js'
import { errorResponses, EVERY_ENDPOINT_ERRORS, FILTER_ERRORS, QUERY_ERRORS } from './openapi-errors.js'
import { ALLOWED_METHODS } from './router.js'
import { SEARCH_INDEX_LAG_HEADER } from './search.js'
import { ERROR_CODES } from './errors.js'

/** The schemas the document names, by component name. */
const COMPONENTS = {
  EntityResource: entityResourceSchema,
  EntityChangeResource: entityChangeResourceSchema,
  EntityCollectionDocument: entityCollectionDocumentSchema,
  EntityDocument: entityDocumentSchema,
  ChangesDocument: changesDocumentSchema,
  SearchDocument: searchDocumentSchema,
  FacetsDocument: facetsDocumentSchema,
  ErrorDocument: errorDocumentSchema,
} as const

type ComponentName = keyof typeof COMPONENTS

const ref = (name: ComponentName) => ({ $ref: `#/components/schemas/${name}` })
const jsonApi = (name: ComponentName) => ({ content: { [JSON_API_MEDIA_TYPE]: { schema: ref(name) } } })
const header = (description: string, required = false) => ({ description, required, schema: { type: 'string' } })

const FEED_HEAD = { 'Change-Feed-Head': header('The newest change visible when the request was served (`echg_...`; absent while the feed is empty).') }
const SEARCH_INDEX_LAG = {
  [SEARCH_INDEX_LAG_HEADER]: header(
    'Changes of the feed the search index had not applied yet (0: current). Search answers while the index catches up; every result is checked against the store, so a lag can only leave out a recent change, never return a deleted or merged entity.',
    true,
  ),
}
const PAGE_HEADERS = { ...FEED_HEAD, Link: header('RFC 8288 `<...>; rel="next"`: the same address as `links.next`.') }
const RATE_LIMIT_HEADERS = {
  RateLimit: header('IETF draft-ietf-httpapi-ratelimit-headers: `"default";r=REMAINING;t=SECONDS` (when a rate limit is configured).'),
  'RateLimit-Policy': header('`"default";q=LIMIT;w=WINDOW_SECONDS` (when a rate limit is configured).'),
}

/** An endpoint's error responses: those of every endpoint, and its own. */
const errors = (...own: Parameters<typeof errorResponses>[0][]) => errorResponses([...EVERY_ENDPOINT_ERRORS, ...own.flat()])

const query = (name: string, description: string, schema: object, required = false) => ({ name, in: 'query', required, description, schema })
const PAGE_LIMIT = query('page[limit]', 'Page size.', { type: 'integer', minimum: 1, maximum: 100, default: 100 })

/**
 * The OpenAPI 3.1 document of the interface, generated from the same zod schemas the server's
 * tests and the client's types use, so that the three cannot drift apart. `serverUrl` is where the
 * registry is mounted.
 */
export function createOpenApiDocument(serverUrl: string): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'entity-registry',
      // The interface's version (docs/registry-interface-v1.md), not the package's.
      version: '1',
      description: 'A read-only JSON:API over warehouse entities: list, get (following merges), search, facet counts, change feed, rendition downloads.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: serverUrl }],
    security: [{ bearer: [] }],
    paths: withHeadAndPreflight({
      '/v1/entities': {
        get: {
          operationId: 'listEntities',
          summary: 'Canonical entities in id order, keyset-paged',
          parameters: [
            query('filter', 'GFFS qualifiers, e.g. `type:person jurisdiction:US-WA`.', { type: 'string', maxLength: 1000 }),
            query('page[after]', 'The `meta.cursor` of the previous page.', { type: 'string', pattern: '^[0-9a-z]+$' }),
            PAGE_LIMIT,
          ],
          responses: {
            '200': { description: 'A page of entities.', headers: { ...PAGE_HEADERS, ...RATE_LIMIT_HEADERS }, ...jsonApi('EntityCollectionDocument') },
            ...errors(FILTER_ERRORS),
          },
        },
      },
      '/v1/entities/changes': {
        get: {
          operationId: 'listChanges',
          summary: 'The change feed, filtered; a bounded window of it per request',
          parameters: [
            query('filter', 'GFFS qualifiers matched against each change (`-type:""` matches every change).', { type: 'string', maxLength: 1000 }, true),
            query('page[after]', 'The `meta.cursor` of the previous page (an `echg_` id).', { type: 'string', pattern: '^echg_[0-9a-z]{12}$' }),
            PAGE_LIMIT,
            query(
              'filterScope',
              '`either`: a change matches when the snapshot before or after it matches the filter, and carries `meta.matchesFilter`. Default `after`: the post-change snapshot only, as the interface specifies.',
              { type: 'string', enum: ['after', 'either'], default: 'after' },
            ),
            query(
              'waitSeconds',
              'Long-poll: when the page after the cursor holds no matching change, hold the request until one commits (on any instance) or this many seconds pass, then answer as usual (`meta.cursor` past the changes scanned). A change that does not match does not end the wait.',
              { type: 'integer', minimum: 1, maximum: 60 },
            ),
            {
              name: 'Last-Event-ID',
              in: 'header',
              required: false,
              description: 'With `Accept: text/event-stream`: the id of the last event received (a change or a cursor); the stream resumes after it, in place of `page[after]`.',
              schema: { type: 'string', pattern: '^echg_[0-9a-z]{12}$' },
            },
          ],
          responses: {
            '200': {
              description:
                'A page of changes; or, with `Accept: text/event-stream`, server-sent events that stay open: `event: change` (`id:` the change id, `data:` the change resource as one line of JSON) for each matching change in feed order, `event: cursor` (`id:` and `data: {"cursor":...}`) where the feed moved past changes that do not match, and a comment line at least every 15 s.',
              headers: { ...PAGE_HEADERS, ...RATE_LIMIT_HEADERS },
              content: {
                ...jsonApi('ChangesDocument').content,
                'text/event-stream': { schema: { type: 'string', description: 'Server-sent events (`event: change`, `event: cursor`).' } },
              },
            },
            ...errors([...FILTER_ERRORS, 'invalid_wait', 'too_many_waiting']),
          },
        },
      },
      '/v1/entities/{id}': {
        get: {
          operationId: 'getEntity',
          summary: 'One entity; a merged id answers the entity it was merged into',
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^[0-9a-z]+$' } }],
          responses: {
            '200': {
              description: 'The entity (a tombstone has type `entity` and no attributes but `texts: []`).',
              headers: { 'Content-Location': header('For a merged id: the surviving entity\'s address.'), ...RATE_LIMIT_HEADERS },
              ...jsonApi('EntityDocument'),
            },
            ...errors(['invalid_id', 'not_found']),
          },
        },
      },
      '/v1/entities/{id}/renditions/{file}': {
        get: {
          operationId: 'downloadRendition',
          summary: 'A rendition\'s bytes (its `links.content`), with Range and ETag',
          parameters: [
            { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^[0-9a-z]+$' } },
            { name: 'file', in: 'path', required: true, description: '`rnd_...` and the extension.', schema: { type: 'string' } },
            { name: 'Range', in: 'header', required: false, schema: { type: 'string' } },
          ],
          responses: {
            '200': { description: 'The bytes.', content: { '*/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } },
            '206': { description: 'The requested range.', content: { '*/*': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } } },
            '304': { description: 'Not modified (If-None-Match).' },
            ...errors(['invalid_id', 'not_found', 'range_not_satisfiable', 'blobs_unavailable']),
          },
        },
      },
      '/v1/search': {
        get: {
          operationId: 'search',
          summary: 'Up to 100 entities: qualifiers filter, words and phrases rank (full text and semantic, fused)',
          parameters: [query('q', 'GFFS: qualifiers, words, "phrases", -exclusions.', { type: 'string', maxLength: 1000 }, true)],
          responses: {
            '200': { description: 'The ranked entities.', headers: { ...FEED_HEAD, ...SEARCH_INDEX_LAG, ...RATE_LIMIT_HEADERS }, ...jsonApi('SearchDocument') },
            ...errors(QUERY_ERRORS, ['search_disabled', 'search_failed']),
          },
        },
      },
      '/v1/facets': {
        get: {
          operationId: 'facets',
          summary: 'How many canonical entities a filter matches, and how many have each value of the fields asked (at most 50 a field, most frequent first)',
          parameters: [
            query('filter', 'GFFS qualifiers, as a list filter takes them.', { type: 'string', maxLength: 1000 }),
            query('fields', `Comma-separated: ${FACET_FIELDS.join(', ')} (default: all of them).`, { type: 'string' }),
          ],
          responses: {
            '200': { description: 'The counts, in `meta`; no `data`.', headers: { ...FEED_HEAD, ...RATE_LIMIT_HEADERS }, ...jsonApi('FacetsDocument') },
            ...errors(FILTER_ERRORS, ['filter_too_broad']),
          },
        },
      },
      '/v1/openapi.json': {
        get: {
          operationId: 'openApiDocument',
          summary: 'This document',
          security: [],
          responses: { '200': { description: 'The OpenAPI document.', content: { 'application/json': { schema: { type: 'object' } } } } },
        },
      },
    }),
    components: {
      schemas: componentSchemas(),
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An API key: `Authorization: Bearer <API_KEY>`.' } },
    },
    // The values of an error's `code`, which the schema leaves a string (a server may add codes):
    // listed for readers and generated documentation.
    'x-error-codes': ERROR_CODES,
  }
}

/** An OpenAPI operation, as far as `withHeadAndPreflight` reads it. */
interface Operation {
  operationId: string
  summary: string
  responses: Record<string, { content?: unknown; [member: string]: unknown }>
  [member: string]: unknown
}

const PREFLIGHT = {
  description: 'The methods and request headers the path allows, for any origin.',
  headers: {
    Allow: header(`\`${ALLOWED_METHODS}\`.`, true),
    'Access-Control-Allow-Methods': header(`\`${ALLOWED_METHODS}\`.`, true),
    'Access-Control-Allow-Headers': header('The request headers a client may send.', true),
    'Access-Control-Max-Age': header('Seconds a browser may keep this answer.', true),
  },
}

/**
 * Each path's GET with its HEAD (GET's answers, without their bodies) and its CORS preflight (OPTIONS,
 * answered without a key): the registry answers all three, so a validating proxy finds each one here.
 */
function withHeadAndPreflight(paths: Record<string, { get: Operation }>) {
  return Object.fromEntries(
    Object.entries(paths).map(([path, { get }]) => {
      const withoutBodies = Object.fromEntries(Object.entries(get.responses).map(([status, { content: _content, ...response }]) => [status, response]))
      const head = { ...get, operationId: `${get.operationId}Head`, summary: `${get.summary}: the headers only`, responses: withoutBodies }
      const options = { operationId: `${get.operationId}Preflight`, summary: 'CORS preflight', security: [], responses: { '204': PREFLIGHT } }
      return [path, { get, head, options }]
    }),
  )
}

let generatedSchemas: Record<string, unknown> | undefined

/** The JSON Schemas of the components, generated once (it takes a few milliseconds). */
function componentSchemas(): Record<string, unknown> {
  if (generatedSchemas === undefined) {
    const registry = z.registry<{ id: string }>()
    for (const [id, schema] of Object.entries(COMPONENTS)) registry.add(schema, { id })
    const { schemas } = z.toJSONSchema(registry, { uri: (id) => `#/components/schemas/${id}` })
    // Each generated schema names its dialect and id; inside `components` OpenAPI 3.1 implies both.
    generatedSchemas = Object.fromEntries(
      Object.entries(schemas).map(([name, { $schema: _schema, $id: _id, ...schema }]) => [name, schema]),
    )
  }
  return generatedSchemas
}
