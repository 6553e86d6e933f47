import type { RequestContext } from './context.js'
import { changeResource } from './documents.js'
import { checkParameters, parseFilterParameter, parsePageParameters } from './query.js'
import { pagedResponse } from './responses.js'

/** GET /v1/entities/changes: the filtered change feed, a bounded window of it per request. */
export async function listChanges({ url, links, store, changesWindow }: RequestContext): Promise<Response> {
  checkParameters(url, ['filter', 'page[after]', 'page[limit]'])
  const filter = parseFilterParameter(url, 'filter', { allowFreeText: false, required: true })!
  const { after, limit } = parsePageParameters(url, (value) => store.isChangeId(value))
  const page = await store.listChanges({ filter: filter.query, after, limit, window: changesWindow })
  const feedHead = await store.feedHead()
  return pagedResponse(url, links, {
    path: '/v1/entities/changes',
    filter: filter.raw,
    data: page.changes.map((change) => changeResource(change, links)),
    cursor: page.cursor,
    hasMore: page.hasMore,
    limit,
    feedHead,
  })
}
