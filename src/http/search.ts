import type { RequestContext } from './context.js'
import type { Answer } from './answer.js'
import { documentJson, entityTemplate } from './documents.js'
import { HttpError } from './errors.js'
import { checkParameters, parseFilterParameter } from './query.js'
import { jsonApiAnswer } from './responses.js'

/**
 * Past this many unapplied changes the index is still being built (a new or rebuilt index), and a
 * search would miss too much: it answers 503 until the index catches up. Fewer (live writes reach
 * the index within a second) are answered: every result is checked against the store, so a result
 * is never wrong, at most one not yet indexed is missing.
 */
export const CATCHING_UP = 1000

/** GET /v1/search?q=…: up to 100 entities, hybrid-ranked (spec 4.4). */
export async function searchEntities({ url, links, store, search: searchOrOpening }: RequestContext): Promise<Answer> {
  checkParameters(url, ['q'])
  const q = parseFilterParameter(url, 'q', { allowFreeText: true, required: true })!
  const search = await searchOrOpening
  if (search === undefined) throw new HttpError('search_failed', 'search is not configured on this server')
  let lag: number
  let entities: Awaited<ReturnType<typeof search.search>>
  try {
    lag = await search.lag()
    entities = lag > CATCHING_UP ? [] : await search.search(q.query)
  } catch (cause) {
    throw new HttpError('search_failed', 'the search failed', undefined, {}, { cause })
  }
  if (lag > CATCHING_UP) {
    throw new HttpError('search_unavailable', `the search index is catching up with the change feed (${lag} changes behind)`, undefined, {
      'Retry-After': '5',
    })
  }
  const feedHead = await store.feedHead()
  const json = documentJson(`{"links":{"self":${JSON.stringify(links.withQuery('/v1/search', url.searchParams))}},"data":[`, entities.map(entityTemplate), ']}', links)
  return jsonApiAnswer(json, 200, feedHead === null ? {} : { 'Change-Feed-Head': feedHead })
}
