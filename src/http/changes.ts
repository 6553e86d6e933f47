import type { StoredChange } from '../contract/entity.js'
import { decodeChangeId } from '../contract/change-id.js'
import { matchesQualifiers } from '../gffs/evaluate.js'
import type { Qualifier } from '../gffs/types.js'
import type { ChangePage } from '../ports/entity-store.js'
import type { RequestContext } from './context.js'
import type { Answer } from './answer.js'
import { changeEventStream, wantsEventStream } from './change-events.js'
import { tooManyWaiting, type ChangesRequest, type FilterScope } from './changes-request.js'
import { changeTemplate } from './documents.js'
import { HttpError } from './errors.js'
import { checkParameters, parseFilterParameter, parsePageParameters } from './query.js'
import { pagedAnswer } from './responses.js'

const FILTER_SCOPES = ['after', 'either'] as const satisfies readonly FilterScope[]

/** `waitSeconds`: a whole number of seconds a long-poll may be held. */
const WAIT_SECONDS = /^[1-9][0-9]?$/
export const MAX_WAIT_SECONDS = 60

/**
 * GET /v1/entities/changes: the filtered change feed, a bounded window of it per request.
 * `filterScope=either` (this implementation's extension; a name with a capital, as JSON:API asks)
 * also matches the snapshot before each change, and says per change whether the entity is in the
 * filtered subset afterwards. `waitSeconds` (an extension) holds a request whose page holds no
 * matching change until one commits or the time is up; `Accept: text/event-stream` streams the
 * feed as server-sent events (change-events.ts).
 */
export async function listChanges(context: RequestContext): Promise<Answer> {
  const { url, store, changesWindow, waits, request } = context
  checkParameters(url, ['filter', 'page[after]', 'page[limit]', 'filterScope', 'waitSeconds'])
  const filter = parseFilterParameter(url, 'filter', { allowFreeText: false, required: true })!
  const scope = parseFilterScope(url)
  const { after, limit } = parsePageParameters(url, (value) => store.isChangeId(value))
  const waitSeconds = parseWaitSeconds(url)
  const { qualifiers } = filter.query
  const changes: ChangesRequest = {
    query: { qualifiers, after, limit, window: changesWindow, scope },
    shape: `${scope}\n${limit}\n${filter.raw}`,
    scope,
    metaOf: (change) => (scope === 'either' ? { matchesFilter: inSubsetAfter(change, qualifiers) } : undefined),
  }
  if (wantsEventStream(request.headers.get('Accept'))) return changeEventStream(context, changes)
  // Shared with identical reads in flight: a wake's long-polls ask again all at once, alike.
  const { page, since } = await waits.read(changes.shape, changes.query, waitSeconds !== null)
  if (waitSeconds !== null && page.changes.length === 0 && !page.hasMore) {
    if (!waits.hasRoom()) {
      throw tooManyWaiting()
    }
    context.holdOpen?.()
    const waited = await waits.wait({ shape: changes.shape, query: { ...changes.query, after: page.cursor }, kind: 'long-poll', since, timeoutMs: waitSeconds * 1000 })
    // No read a waiter: the head the wake read, or the cursor where that is further.
    return sharedChangesAnswer(context, changes, waited.page, laterOf(waits.head, waited.page.cursor), waitSeconds)
  }
  // A head read shared may have begun before the page's read: never older than the page's cursor.
  return sharedChangesAnswer(context, changes, page, laterOf(await waits.readHead(), page.cursor), waitSeconds)
}

/**
 * The answers made of a page one read gave many requests (a wake's, or a shared read): clients that
 * ask alike (the same URL) get one answer made once, its body encoded once (each response then
 * writes the same bytes), each with headers of its own.
 */
const encoder = new TextEncoder()
const answersOfPages = new WeakMap<ChangePage, Map<string, Answer>>()

function sharedChangesAnswer(context: RequestContext, changes: ChangesRequest, page: ChangePage, feedHead: string | null, waitSeconds: number | null): Answer {
  const key = `${context.url.href}\n${feedHead}`
  let answers = answersOfPages.get(page)
  let answer = answers?.get(key)
  if (answer === undefined) {
    answer = changesAnswer(context, changes, page, feedHead, waitSeconds)
    if (typeof answer.body === 'string') {
      answer.body = encoder.encode(answer.body)
      answer.headers['Content-Length'] = String(answer.body.byteLength)
    }
    if (answers === undefined) answersOfPages.set(page, (answers = new Map()))
    answers.set(key, answer)
  }
  return { ...answer, headers: { ...answer.headers } }
}

function changesAnswer({ url, links }: RequestContext, changes: ChangesRequest, page: ChangePage, feedHead: string | null, waitSeconds: number | null): Answer {
  const carried: [string, string][] = [['filter', url.searchParams.get('filter')!]]
  if (url.searchParams.has('filterScope')) carried.push(['filterScope', changes.scope])
  if (waitSeconds !== null) carried.push(['waitSeconds', String(waitSeconds)])
  return pagedAnswer(url, links, {
    path: '/v1/entities/changes',
    carried,
    data: page.changes.map((change) => changeTemplate(change, changes.metaOf(change))),
    cursor: page.cursor,
    hasMore: page.hasMore,
    limit: changes.query.limit,
    feedHead,
  })
}

/** The later of two change ids (null: the start of the feed). */
function laterOf(a: string | null, b: string | null): string | null {
  if (a === null) return b
  if (b === null) return a
  return (decodeChangeId(a) ?? 0) >= (decodeChangeId(b) ?? 0) ? a : b
}

function parseWaitSeconds(url: URL): number | null {
  const value = url.searchParams.get('waitSeconds')
  if (value === null) return null
  if (!WAIT_SECONDS.test(value) || Number(value) > MAX_WAIT_SECONDS) {
    throw new HttpError('invalid_wait', `waitSeconds must be a whole number from 1 to ${MAX_WAIT_SECONDS}`, 'waitSeconds')
  }
  return Number(value)
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
