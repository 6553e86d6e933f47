import { describe, expect, it } from 'vitest'
import { createRouter } from '../../src/http/router.js'

const matched = (basePath: string, pathname: string) => {
  const match = createRouter(basePath)(pathname)
  return match === null ? null : [match.path, match.params]
}

describe('router', () => {
  it('matches a path segment by segment, a parameter taking one non-empty segment as it is written', () => {
    expect(matched('', '/v1/entities')).toEqual(['/v1/entities', {}])
    expect(matched('', '/v1/entities/changes')).toEqual(['/v1/entities/changes', {}])
    expect(matched('', '/v1/entities/e1%41')).toEqual(['/v1/entities/:id', { id: 'e1%41' }])
    expect(matched('', '/v1/entities/e1/renditions/r1.html')).toEqual(['/v1/entities/:id/renditions/:file', { id: 'e1', file: 'r1.html' }])
    expect(matched('', '/v1/search')).toEqual(['/v1/search', {}])
  })

  it('allows trailing slashes, and nothing else around a segment', () => {
    expect(matched('', '/v1/entities/e1//')).toEqual(['/v1/entities/:id', { id: 'e1' }])
    expect(matched('', '/v1/entities/')).toEqual(['/v1/entities', {}])
    for (const path of ['/', '//v1/entities', '/v1//entities', '/v1/entities//renditions/r', '/v1/entities/e1/renditions/', '/V1/entities', '/v1/entitiesx', '/v2/entities']) {
      expect(matched('', path), path).toBeNull()
    }
  })

  it('routes under a base path, whose repeated slashes are one', () => {
    expect(matched('/api//registry', '/api/registry/v1/entities/e1')).toEqual(['/v1/entities/:id', { id: 'e1' }])
    expect(matched('/api/registry', '/v1/entities')).toBeNull()
    expect(matched('/api/registry', '/api/registryx/v1/entities')).toBeNull()
  })
})
