import type { StoredChange, StoredEntity } from '../contract/entity.js'
import { fillResourceTemplate, fillResourceTemplateBytes, renderChangeResource, renderEntityResource } from '../contract/resource-json.js'
import type { ResourceTemplate } from '../contract/resource-template.js'
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

/**
 * A document's UTF-8 bytes: `before`, the resources, `after`. Resources a store read joined as
 * bytes stay bytes: decoding a page that holds any non-ASCII text takes V8's slow path, and the
 * text would be encoded again to be sent.
 */
export function documentBody(before: string, resources: readonly ResourceTemplate[] | Uint8Array, after: string, links: Links): string | Uint8Array {
  return resources instanceof Uint8Array ? fillResourceTemplateBytes(before, resources, after, links.base) : documentJson(before, resources, after, links)
}
