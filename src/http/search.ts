import type { RequestContext } from './context.js'
import type { Answer } from './answer.js'
import { documentJson, entityTemplate } from './documents.js'
import { HttpError } from './errors.js'
import { checkParameters, parseFilterParameter } from './query.js'
import { jsonApiAnswer } from './responses.js'

/** The response header that says how many changes of the feed the index had not applied yet (0: current). */
export const SEARCH_INDEX_LAG_HEADER = 'Search-Index-Lag'

/**
 * GET /v1/search?q=…: up to 100 entities, hybrid-ranked (spec 4.4). The index answers as it stands,
 * however far behind the feed: every result is checked against the store, so none is deleted, merged
 * away or stale, at most a recent one is missing, and `Search-Index-Lag` says how far behind it is.
 */
export async function searchEntities({ url, links, store, search: searchOrOpening }: RequestContext): Promise<Answer> {
  // A server without search has no such resource, whatever the query.
  if (searchOrOpening === undefined) throw new HttpError('search_disabled', 'search is switched off on this server')
  checkParameters(url, ['q'])
  const q = parseFilterParameter(url, 'q', { allowFreeText: true, required: true })!
  const search = await searchOrOpening
  // Configured but not opened (its native library failed to load, DESIGN 8): a failure, not a choice.
  if (search === undefined) throw new HttpError('search_failed', 'the search index could not be opened')
  let lag: number
  let entities: Awaited<ReturnType<typeof search.search>>
  try {
    ;[lag, entities] = await Promise.all([search.lag(), search.search(q.query)])
  } catch (cause) {
    throw new HttpError('search_failed', 'the search failed', undefined, {}, { cause })
  }
  const feedHead = await store.feedHead()
  const json = documentJson(`{"links":{"self":${JSON.stringify(links.withQuery('/v1/search', url.searchParams))}},"data":[`, entities.map(entityTemplate), ']}', links)
  return jsonApiAnswer(json, 200, { [SEARCH_INDEX_LAG_HEADER]: String(lag), ...(feedHead === null ? {} : { 'Change-Feed-Head': feedHead }) })
}
