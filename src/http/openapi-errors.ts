import { statusOf, type ErrorCode } from './errors.js'
import { JSON_API_MEDIA_TYPE } from './media-type.js'

/**
 * What each error code means, for the OpenAPI document: a `Record` over every code, so that a code
 * added to `ErrorCode` cannot be left undescribed.
 */
const MEANING: Record<ErrorCode, string> = {
  invalid_filter: 'A filter (or `q`, or `filterScope`) that is missing where required, does not parse, or is given twice.',
  unsupported_field: 'A filter names a field that cannot be filtered on, or `fields` one that cannot be counted.',
  nested_field_path: 'A filter names a nested field path.',
  free_text_not_allowed: 'A filter holds free text: words and phrases are for `/v1/search`.',
  invalid_pagination: '`page[limit]` or `page[after]` is invalid, or given twice, or a `page[...]` parameter this endpoint does not take.',
  invalid_wait: '`waitSeconds` is not a whole number from 1 to 60, or is given twice.',
  invalid_id: 'An id in the path is malformed: an entity id is `[0-9a-z]+`, a rendition file `rnd_`, 32 lowercase hex digits and an extension.',
  unknown_parameter: 'A parameter of lowercase letters this endpoint does not take (`source.parameter` names it).',
  filter_too_broad: 'The filter matches too many entities to count.',
  unauthorized: 'A missing or invalid API key (`WWW-Authenticate: Bearer`).',
  not_found: 'No such entity (or a drained one, or a merge chain too long to follow), or no such rendition of it.',
  method_not_allowed: 'A method other than GET, HEAD and OPTIONS (`Allow` lists them).',
  not_acceptable: 'Accept allows JSON:API only with media type parameters other than ext and profile.',
  unsupported_media_type: 'Content-Type is JSON:API with media type parameters other than ext and profile.',
  range_not_satisfiable: 'The range lies outside the bytes (`Content-Range: bytes */SIZE`).',
  rate_limited: "The rate limit is exceeded: the key's (or its organization's), or that of requests with a missing or wrong key from this client address.",
  search_disabled: 'Search is switched off on this server.',
  search_failed: 'The search index could not be opened, or the search failed.',
  store_unavailable: 'The store is away.',
  blobs_unavailable: 'The rendition store is away.',
  rate_limit_unavailable: 'The rate limiter is away.',
  too_many_waiting: 'As many long-polls and event streams wait on this instance as it holds (`--max-waiting`): retry after `Retry-After`, or on another instance.',
  internal_error: 'An unexpected failure: reported to the operator, never shown in the answer.',
}

const header = (description: string) => ({ description, required: true, schema: { type: 'string' } })
const RETRY_AFTER = { 'Retry-After': header('Seconds to wait.') }

/** The headers an error code is always answered with. */
const HEADERS: Partial<Record<ErrorCode, Record<string, ReturnType<typeof header>>>> = {
  unauthorized: { 'WWW-Authenticate': header('`Bearer`.') },
  method_not_allowed: { Allow: header('The methods the path answers.') },
  range_not_satisfiable: { 'Content-Range': header('`bytes */SIZE`.') },
  rate_limited: RETRY_AFTER,
  too_many_waiting: RETRY_AFTER,
  store_unavailable: RETRY_AFTER,
  blobs_unavailable: RETRY_AFTER,
  rate_limit_unavailable: RETRY_AFTER,
}

/** The errors every endpoint behind the API key can answer, whatever it serves. */
export const EVERY_ENDPOINT_ERRORS: readonly ErrorCode[] = [
  'unknown_parameter',
  'invalid_pagination',
  'unauthorized',
  'not_acceptable',
  'unsupported_media_type',
  'rate_limited',
  'store_unavailable',
  'rate_limit_unavailable',
  'internal_error',
]

/** The errors a GFFS parameter can bring: search's `q`. */
export const QUERY_ERRORS: readonly ErrorCode[] = ['invalid_filter', 'unsupported_field', 'nested_field_path']

/** The errors a `filter` can bring: qualifiers only, no free text. */
export const FILTER_ERRORS: readonly ErrorCode[] = [...QUERY_ERRORS, 'free_text_not_allowed']

/**
 * The OpenAPI responses of an operation's error codes, one a status (from `HttpError`'s own table):
 * each lists its codes and their meaning, names the headers all of them carry, and its schema allows
 * those codes only, so that an answer with a code the document does not list fails validation.
 */
export function errorResponses(codes: readonly ErrorCode[]): Record<string, object> {
  const byStatus = new Map<number, ErrorCode[]>()
  for (const code of new Set(codes)) byStatus.set(statusOf(code), [...(byStatus.get(statusOf(code)) ?? []), code])
  const responses: Record<string, object> = {}
  for (const [status, ofStatus] of [...byStatus].sort(([a], [b]) => a - b)) {
    const headers = Object.fromEntries(
      Object.entries(HEADERS[ofStatus[0]!] ?? {}).filter(([name]) => ofStatus.every((code) => HEADERS[code]?.[name] !== undefined)),
    )
    const error = { type: 'object', required: ['status', 'code'], properties: { status: { const: String(status) }, code: { enum: ofStatus } } }
    responses[String(status)] = {
      description: ofStatus.map((code) => `- \`${code}\`: ${MEANING[code]}`).join('\n'),
      ...(Object.keys(headers).length === 0 ? {} : { headers }),
      content: {
        [JSON_API_MEDIA_TYPE]: {
          schema: { allOf: [{ $ref: '#/components/schemas/ErrorDocument' }, { type: 'object', properties: { errors: { type: 'array', items: error } } }] },
        },
      },
    }
  }
  return responses
}
