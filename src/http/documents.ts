import type { StoredChange } from '../contract/entity.js'
import { fillResourceTemplate, renderChangeResource, renderEntityResource } from '../contract/resource-json.js'
import type { ListedEntity } from '../ports/entity-store.js'
import type { Links } from './links.js'

/** Entities as JSON resources, comma-separated: the store's rendered ones as they are, others rendered now. */
export function entitiesJson(entities: readonly ListedEntity[], links: Links): string {
  return fillResourceTemplate(entities.map((entity) => ('resource' in entity ? entity.resource : renderEntityResource(entity))).join(','), links.base)
}

/** A change as a JSON resource; `meta` is added when given. */
export function changeJson(change: StoredChange, links: Links, meta?: Record<string, unknown>): string {
  const resource = fillResourceTemplate(renderChangeResource(change), links.base)
  return meta === undefined ? resource : `${resource.slice(0, -1)},"meta":${JSON.stringify(meta)}}`
}
