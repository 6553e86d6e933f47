import { GffsError } from '../gffs/errors.js'
import { parseGffs } from '../gffs/parse.js'
import type { GffsQuery } from '../gffs/types.js'
import { HttpError, type ErrorCode } from './errors.js'

export const MAX_PAGE_LIMIT = 100
const PAGE_LIMIT = /^[1-9][0-9]{0,2}$/

/**
 * Rejects what JSON:API reserves and this endpoint does not support: unknown parameters made only
 * of a-z, and `page[...]` members other than the endpoint's. Other names are the client's own.
 */
export function checkParameters(url: URL, allowed: readonly string[]): void {
  if (url.search === '') return
  for (const name of new Set(url.searchParams.keys())) {
    if (allowed.includes(name)) {
      if (url.searchParams.getAll(name).length > 1) {
        throw new HttpError(codeFor(name), `parameter ${name} is given more than once`, name)
      }
    } else if (name.startsWith('page[')) {
      throw new HttpError('invalid_pagination', `${name} is not supported here; use ${allowed.filter((a) => a.startsWith('page[')).join(' and ') || 'no pagination'}`, name)
    } else if (/^[a-z]+$/.test(name)) {
      throw new HttpError('unknown_parameter', `parameter ${name} is not supported here`, name)
    }
  }
}

function codeFor(name: string): ErrorCode {
  if (name === 'waitSeconds') return 'invalid_wait'
  return name.startsWith('page[') ? 'invalid_pagination' : 'invalid_filter'
}

/** Parses a GFFS parameter; GFFS errors become 400s that name the parameter, term and position. */
export function parseFilterParameter(
  url: URL,
  name: string,
  options: { allowFreeText: boolean; required: boolean },
): { raw: string; query: GffsQuery } | null {
  const raw = url.searchParams.get(name)
  if (raw === null || (raw === '' && !options.required)) {
    if (options.required) throw new HttpError('invalid_filter', `parameter ${name} is required`, name)
    return null
  }
  if (raw.trim() === '') throw new HttpError('invalid_filter', `parameter ${name} must not be empty`, name)
  try {
    return { raw, query: parseGffs(raw, { allowFreeText: options.allowFreeText }) }
  } catch (error) {
    if (error instanceof GffsError) throw new HttpError(error.code, `${name}: ${error.message}`, name)
    throw error
  }
}

export interface PageParameters {
  after: string | null
  limit: number
}

export function parsePageParameters(url: URL, isCursor: (value: string) => boolean): PageParameters {
  const after = url.searchParams.get('page[after]')
  if (after !== null && !isCursor(after)) {
    throw new HttpError('invalid_pagination', 'page[after] must be the meta.cursor of a previous page', 'page[after]')
  }
  const limit = url.searchParams.get('page[limit]')
  if (limit !== null && !(PAGE_LIMIT.test(limit) && Number(limit) <= MAX_PAGE_LIMIT)) {
    throw new HttpError('invalid_pagination', `page[limit] must be a whole number from 1 to ${MAX_PAGE_LIMIT}`, 'page[limit]')
  }
  return { after, limit: limit === null ? MAX_PAGE_LIMIT : Number(limit) }
}
