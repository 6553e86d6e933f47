import type { EndpointHandler } from './context.js'
import { getEntity, listEntities } from './entities.js'
import { listChanges } from './changes.js'
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

/** The endpoint a path names: its route's pattern, its handler, and the path's parameters. */
export interface RouteMatch {
  path: string
  handler: EndpointHandler
  /** Percent-encoded, as in the request. */
  params: Record<string, string>
}

const isParameter = (segment: string) => segment.startsWith(':')

/** A route's parameters in a request path's parts (its first part empty, before the leading slash), or null when it is not the route's path. */
function paramsOf(segments: readonly string[], parts: readonly string[]): Record<string, string> | null {
  if (parts.length !== segments.length + 1) return null
  for (let index = 0; index < segments.length; index++) {
    const part = parts[index + 1]!
    if (isParameter(segments[index]!) ? part === '' : segments[index] !== part) return null
  }
  const params: Record<string, string> = {}
  for (let index = 0; index < segments.length; index++) if (isParameter(segments[index]!)) params[segments[index]!.slice(1)] = parts[index + 1]!
  return params
}

/** A path's segments after its leading slash; repeated slashes of a configured path are one. */
const segmentsOf = (path: string) => path.replace(/\/{2,}/g, '/').split('/').slice(1)

/**
 * The endpoint a request's path names, tried in order on the path of the URL the registry already
 * parsed: segment by segment, a `:name` segment taking any one non-empty segment; trailing slashes
 * are allowed. A regular expression a route (with named groups) cost a get by id more than the rest
 * of its routing (bench/README.md).
 */
export function createRouter(basePath: string): (pathname: string) => RouteMatch | null {
  const base = basePath === '' ? [] : segmentsOf(basePath)
  const endpoints = routes().map(([path, handler]) => ({ path, handler, segments: [...base, ...segmentsOf(path)] }))
  return (pathname) => {
    let end = pathname.length
    while (end > 1 && pathname.charCodeAt(end - 1) === 0x2f) end--
    const parts = (end === pathname.length ? pathname : pathname.slice(0, end)).split('/')
    for (const { path, handler, segments } of endpoints) {
      const params = paramsOf(segments, parts)
      if (params !== null) return { path, handler, params }
    }
    return null
  }
}
