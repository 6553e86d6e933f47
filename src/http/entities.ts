import type { StoredEntity } from '../contract/entity.js'
import { isEntityId } from '../contract/ids.js'
import { followMerges } from '../contract/merges.js'
import type { EntityStore } from '../ports/entity-store.js'
import type { RequestContext } from './context.js'
import type { Answer } from './answer.js'
import { documentJson, entityTemplate } from './documents.js'
import { HttpError } from './errors.js'
import { checkParameters, parseFilterParameter, parsePageParameters } from './query.js'
import { jsonApiAnswer, pagedAnswer } from './responses.js'

/** GET /v1/entities: canonical entities in id order, keyset-paged. */
export async function listEntities({ url, links, store }: RequestContext): Promise<Answer> {
  checkParameters(url, ['filter', 'page[after]', 'page[limit]'])
  const filter = parseFilterParameter(url, 'filter', { allowFreeText: false, required: false })
  const { after, limit } = parsePageParameters(url, isEntityId)
  // The head is read before the page (or with it): a client following the feed from it misses
  // nothing this page predates.
  const headBefore = store.pagesCarryFeedHead ? null : await store.feedHead()
  const page = await store.listEntities({ qualifiers: filter?.query.qualifiers ?? [], after, limit, joined: true })
  const feedHead = store.pagesCarryFeedHead ? (page.feedHead ?? null) : headBefore
  const joined = page.joinedResources
  return pagedAnswer(url, links, {
    path: '/v1/entities',
    carried: filter === null ? [] : [['filter', filter.raw]],
    data: joined === undefined ? page.entities.map(entityTemplate) : typeof joined === 'string' ? (joined === '' ? [] : [joined]) : joined,
    cursor: page.cursor !== undefined ? page.cursor : (page.entities.at(-1)?.id ?? null),
    hasMore: page.hasMore,
    limit,
    feedHead,
  })
}

/** GET /v1/entities/{id}: the entity, following merges to the canonical one. */
export async function getEntity({ url, params, links, store }: RequestContext): Promise<Answer> {
  checkParameters(url, [])
  const id = requireEntityId(params.id)
  // Awaited only when it is a promise (a merge followed): each await costs a get by id allocations.
  const resolved = canonicalOf(store, id, await store.getEntity(id))
  const entity = resolved instanceof Promise ? await resolved : resolved
  const json = documentJson(`{"links":{"self":${JSON.stringify(links.entity(id))}},"data":`, [entityTemplate(entity)], '}', links)
  return jsonApiAnswer(json, 200, entity.id === id ? undefined : { 'Content-Location': links.entity(entity.id) })
}

export function requireEntityId(id: string | undefined): string {
  if (id === undefined || !isEntityId(id)) throw new HttpError('invalid_id', 'the entity id must match [0-9a-z]+', 'id')
  return id
}

/**
 * The entity an id stands for: merges are followed up to MAX_MERGE_HOPS; a longer chain, a cycle, a
 * missing link or a drained entity is not found. A tombstone is found (with an empty snapshot).
 */
export async function resolveEntity(store: EntityStore, id: string): Promise<StoredEntity> {
  return canonicalOf(store, id, await store.getEntity(id))
}

/** What `id` stands for, given the entity read for it: that entity, or (a promise of) where its merges end. */
function canonicalOf(store: EntityStore, id: string, entity: StoredEntity | null): StoredEntity | Promise<StoredEntity> {
  if (entity?.state === 'merged') return followMerges(entity, (next) => store.getEntity(next)).then(({ end }) => canonicalOf(store, id, end))
  if (entity === null || entity.state === 'drained') throw new HttpError('not_found', `entity ${id} was not found`)
  return entity
}
