import { FACET_FIELDS, type FacetField } from '../contract/fields.js'
import type { Answer } from './answer.js'
import type { EndpointHandler } from './context.js'
import { FacetFilterTooBroadError } from '../ports/facet-errors.js'
import { HttpError } from './errors.js'
import { checkParameters, parseFilterParameter } from './query.js'
import { jsonApiAnswer } from './responses.js'
import { setNewest } from '../bounded-map.js'

/** Values answered a field at most. */
export const FACET_LIMIT = 50
/** Answers kept, by filter and fields; each is good until the feed moves. */
const CACHED_ANSWERS = 256

/**
 * GET /v1/facets: how many canonical entities a filter matches, and how many of them have each value
 * of the fields asked. Counting reads every matching entity, so an answer is kept until the feed
 * head moves: the data changes only with the feed.
 */
export function createFacetsEndpoint(): EndpointHandler {
  const answers = new Map<string, { feedHead: string | null; json: string }>()
  return async ({ url, links, store }): Promise<Answer> => {
    checkParameters(url, ['filter', 'fields'])
    const filter = parseFilterParameter(url, 'filter', { allowFreeText: false, required: false })
    const fields = parseFacetFields(url.searchParams.get('fields'))
    const key = JSON.stringify([filter?.raw ?? '', fields])
    const head = await store.feedHead()
    let answer = answers.get(key)
    if (answer === undefined || answer.feedHead !== head) {
      const counts = await store.countFacets({ qualifiers: filter?.query.qualifiers ?? [], fields, limit: FACET_LIMIT }).catch((error: unknown) => {
        throw error instanceof FacetFilterTooBroadError ? new HttpError('filter_too_broad', `filter: ${error.message}`, 'filter') : error
      })
      const self = links.withQuery('/v1/facets', [...(filter === null ? [] : [['filter', filter.raw] as [string, string]]), ['fields', fields.join(',')]])
      answer = { feedHead: counts.feedHead, json: JSON.stringify({ links: { self }, meta: { total: counts.total, facets: counts.facets } }) }
      // Least recently computed first out.
      setNewest(answers, key, answer, CACHED_ANSWERS)
    }
    return jsonApiAnswer(answer.json, 200, answer.feedHead === null ? {} : { 'Change-Feed-Head': answer.feedHead })
  }
}

/** `fields=type,jurisdiction`: facet fields, each once; all of them when absent. */
function parseFacetFields(raw: string | null): FacetField[] {
  if (raw === null) return [...FACET_FIELDS]
  const names = raw.split(',')
  for (const name of names) {
    if (!(FACET_FIELDS as readonly string[]).includes(name)) {
      throw new HttpError('unsupported_field', `fields: "${name}" cannot be counted; facets count ${FACET_FIELDS.join(', ')}`, 'fields')
    }
  }
  if (new Set(names).size !== names.length) throw new HttpError('unsupported_field', 'fields: a field is named more than once', 'fields')
  return names as FacetField[]
}
