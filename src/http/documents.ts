import type { StoredChange, StoredEntity } from '../contract/entity.js'
import { fillResourceTemplate, renderChangeResource, renderEntityResource, type ResourceTemplate } from '../contract/resource-json.js'
import type { ListedEntity } from '../ports/entity-store.js'
import type { Links } from './links.js'

/** An entity's resource: the store's rendered one as it is, or rendered now. */
export function entityTemplate(entity: ListedEntity): ResourceTemplate {
  return entity.resource ?? renderEntityResource(entity as StoredEntity)
}

/** A change's resource; `meta` is added when given. */
export function changeTemplate(change: StoredChange, meta?: Record<string, unknown>): ResourceTemplate {
  const resource = renderChangeResource(change)
  return meta === undefined ? resource : `${resource.slice(0, -1)},"meta":${JSON.stringify(meta)}}`
}

/**
 * A document: `before`, the resources comma-separated, `after`, joined in one copy and filled in one
 * more (a page is some 50 KB: each copy of it shows in the garbage collector's share).
 */
export function documentJson(before: string, resources: readonly ResourceTemplate[], after: string, links: Links): string {
  const parts = [before]
  resources.forEach((resource, index) => (index === 0 ? parts.push(resource) : parts.push(',', resource)))
  parts.push(after)
  return fillResourceTemplate(parts.join(''), links.base)
}
