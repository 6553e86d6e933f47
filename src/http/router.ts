import { IttyRouter, type IRequest } from 'itty-router'
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

export function createRouter(basePath: string): (context: RouterContext) => Promise<Answer> {
  const router = IttyRouter<IRequest, [RouterContext], Answer>({ base: basePath })
  const endpoints = routes()
  for (const [path, handler] of endpoints) {
    const route = (request: IRequest, context: RouterContext) => {
      context.trace.route = path
      return handler({ ...context, params: request.params })
    }
    router.get(path, route).head(path, route)
  }
  for (const [path] of endpoints) {
    router.all(path, () => {
      throw new HttpError('method_not_allowed', 'this service is read-only: use GET or HEAD', undefined, { Allow: ALLOWED_METHODS })
    })
  }
  router.all('*', () => {
    throw new HttpError('not_found', 'no such endpoint')
  })
  return (context) => router.fetch(context.request as IRequest, context)
}
