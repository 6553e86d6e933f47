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
  const entity = canonicalOf(id, await mergeEndOf(store, id))
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
  return canonicalOf(id, await mergeEndOf(store, id))
}

/** Where `id`'s merges end: in one read where the store can, else one `getEntity` a hop. */
function mergeEndOf(store: EntityStore, id: string): Promise<StoredEntity | null> {
  if (store.getMergeEnd !== undefined) return store.getMergeEnd(id)
  return store.getEntity(id).then((entity) => (entity?.state === 'merged' ? followMerges(entity, (next) => store.getEntity(next)).then(({ end }) => end) : entity))
}

/** The end of `id`'s merges as served: refused when there is none, or it is drained. */
function canonicalOf(id: string, end: StoredEntity | null): StoredEntity {
  if (end === null || end.state === 'drained') throw new HttpError('not_found', `entity ${id} was not found`)
  return end
}
