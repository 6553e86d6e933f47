import type { StoredChange } from '../contract/entity.js'
import { matchesQualifiers } from '../gffs/evaluate.js'
import type { Qualifier } from '../gffs/types.js'
import type { RequestContext } from './context.js'
import type { Answer } from './answer.js'
import { changeTemplate } from './documents.js'
import { HttpError } from './errors.js'
import { checkParameters, parseFilterParameter, parsePageParameters } from './query.js'
import { pagedAnswer } from './responses.js'

const FILTER_SCOPES = ['after', 'either'] as const
type FilterScope = (typeof FILTER_SCOPES)[number]

/**
 * GET /v1/entities/changes: the filtered change feed, a bounded window of it per request.
 * `filterScope=either` (this implementation's extension; a name with a capital, as JSON:API asks)
 * also matches the snapshot before each change, and says per change whether the entity is in the
 * filtered subset afterwards.
 */
export async function listChanges({ url, links, store, changesWindow }: RequestContext): Promise<Answer> {
  checkParameters(url, ['filter', 'page[after]', 'page[limit]', 'filterScope'])
  const filter = parseFilterParameter(url, 'filter', { allowFreeText: false, required: true })!
  const scope = parseFilterScope(url)
  const { after, limit } = parsePageParameters(url, (value) => store.isChangeId(value))
  const { qualifiers } = filter.query
  const page = await store.listChanges({ qualifiers, after, limit, window: changesWindow, scope })
  const feedHead = await store.feedHead()
  return pagedAnswer(url, links, {
    path: '/v1/entities/changes',
    carried: [['filter', filter.raw], ...(url.searchParams.has('filterScope') ? [['filterScope', scope] as [string, string]] : [])],
    data: page.changes.map((change) => changeTemplate(change, scope === 'either' ? { matchesFilter: inSubsetAfter(change, qualifiers) } : undefined)),
    cursor: page.cursor,
    hasMore: page.hasMore,
    limit,
    feedHead,
  })
}

function parseFilterScope(url: URL): FilterScope {
  const value = url.searchParams.get('filterScope') ?? 'after'
  if (!(FILTER_SCOPES as readonly string[]).includes(value)) {
    throw new HttpError('invalid_filter', `filterScope must be ${FILTER_SCOPES.join(' or ')}`, 'filterScope')
  }
  return value as FilterScope
}

/** Whether the entity belongs to the filtered subset after the change: deletes, drains and merges leave every subset. */
function inSubsetAfter(change: StoredChange, qualifiers: readonly Qualifier[]): boolean {
  return (change.changeType === 'create' || change.changeType === 'update') && matchesQualifiers(qualifiers, change.snapshot)
}
