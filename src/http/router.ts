import type { Answer } from './answer.js'
import { listChanges } from './changes.js'
import type { EndpointHandler, RequestContext } from './context.js'
import { getEntity, listEntities } from './entities.js'
import { HttpError } from './errors.js'
import { downloadRendition } from './renditions.js'
import { createFacetsEndpoint } from './facets.js'
import { searchEntities } from './search.js'

/**
 * Every endpoint, made for one registry (an endpoint may keep state: facets keep answers); all answer
 * GET (and HEAD), nothing else. Order matters: `changes` before `:id`.
 */
const routes = (): [string, EndpointHandler][] => [
  ['/v1/entities', listEntities],
  ['/v1/entities/changes', listChanges],
  ['/v1/entities/:id', getEntity],
  ['/v1/entities/:id/renditions/:file', downloadRendition],
  ['/v1/search', searchEntities],
  ['/v1/facets', createFacetsEndpoint()],
]

export const ALLOWED_METHODS = 'GET, HEAD, OPTIONS'

type RouterContext = Omit<RequestContext, 'params'>

/**
 * A route's path as a pattern over the request's path: `:name` takes one segment (percent-encoded,
 * as in the request), trailing slashes are allowed, repeated slashes of the route's own are one.
 */
function pathPattern(path: string): RegExp {
  const pattern = path
    .replace(/\/+(\/|$)/g, '$1')
    .split(/(\/:\w+)/)
    .map((part) => (part.startsWith('/:') ? `/(?<${part.slice(2)}>[^/]+?)` : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('')
  return new RegExp(`^${pattern}/*$`)
}

/**
 * The endpoint a request's path names, tried in order on the URL the registry already parsed (a
 * general router parsed it again, and walked a route a method).
 */
export function createRouter(basePath: string): (context: RouterContext) => Promise<Answer> {
  const endpoints = routes().map(([path, handler]) => ({ path, handler, pattern: pathPattern(basePath + path) }))
  return async (context) => {
    const { pathname } = context.url
    for (const { path, handler, pattern } of endpoints) {
      const match = pattern.exec(pathname)
      if (match === null) continue
      if (context.request.method !== 'GET' && context.request.method !== 'HEAD') {
        throw new HttpError('method_not_allowed', 'this service is read-only: use GET or HEAD', undefined, { Allow: ALLOWED_METHODS })
      }
      context.trace.route = path
      return handler({ ...context, params: { ...match.groups } })
    }
    throw new HttpError('not_found', 'no such endpoint')
  }
}
