export type ErrorCode =
  | 'invalid_filter'
  | 'unsupported_field'
  | 'nested_field_path'
  | 'free_text_not_allowed'
  | 'invalid_pagination'
  | 'invalid_wait'
  | 'invalid_id'
  | 'unknown_parameter'
  | 'filter_too_broad'
  | 'unauthorized'
  | 'not_found'
  | 'method_not_allowed'
  | 'not_acceptable'
  | 'unsupported_media_type'
  | 'range_not_satisfiable'
  | 'rate_limited'
  | 'search_disabled'
  | 'search_failed'
  | 'store_unavailable'
  | 'blobs_unavailable'
  | 'rate_limit_unavailable'
  | 'too_many_waiting'
  | 'internal_error'

const STATUS_AND_TITLE: Record<ErrorCode, [number, string]> = {
  invalid_filter: [400, 'Invalid filter'],
  unsupported_field: [400, 'Unsupported field'],
  nested_field_path: [400, 'Nested field path'],
  free_text_not_allowed: [400, 'Free text not allowed'],
  invalid_pagination: [400, 'Invalid pagination'],
  invalid_wait: [400, 'Invalid wait'],
  invalid_id: [400, 'Invalid id'],
  unknown_parameter: [400, 'Unknown parameter'],
  filter_too_broad: [400, 'Filter too broad'],
  unauthorized: [401, 'Unauthorized'],
  not_found: [404, 'Not found'],
  method_not_allowed: [405, 'Method not allowed'],
  not_acceptable: [406, 'Not acceptable'],
  unsupported_media_type: [415, 'Unsupported media type'],
  range_not_satisfiable: [416, 'Range not satisfiable'],
  rate_limited: [429, 'Too many requests'],
  search_disabled: [404, 'Search disabled'],
  search_failed: [500, 'Search failed'],
  store_unavailable: [503, 'Store unavailable'],
  blobs_unavailable: [503, 'Renditions unavailable'],
  rate_limit_unavailable: [503, 'Rate limiter unavailable'],
  too_many_waiting: [503, 'Too many waiting requests'],
  internal_error: [500, 'Internal server error'],
}

/** Every code the registry answers, with its status and title: the OpenAPI document lists them (`x-error-codes`). */
export const ERROR_CODES = Object.entries(STATUS_AND_TITLE).map(([code, [status, title]]) => ({ code: code as ErrorCode, status, title }))

/** The status an error code is answered with. */
export const statusOf = (code: ErrorCode): number => STATUS_AND_TITLE[code][0]

/** An error answered as a JSON:API error document; thrown by handlers, rendered by the registry. */
export class HttpError extends Error {
  override readonly name = 'HttpError'
  readonly status: number
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    /** The query parameter at fault (`source.parameter`). */
    readonly parameter?: string,
    /** Extra response headers, such as Allow or Retry-After. */
    readonly headers: Record<string, string> = {},
    /** `cause`: what failed underneath a 5xx, reported to `onError`, never answered. */
    options?: ErrorOptions,
  ) {
    super(detail, options)
    this.status = statusOf(code)
  }

  toDocument() {
    return {
      errors: [
        {
          status: String(this.status),
          code: this.code,
          title: STATUS_AND_TITLE[this.code][1],
          detail: this.detail,
          ...(this.parameter === undefined ? {} : { source: { parameter: this.parameter } }),
        },
      ],
    }
  }
}
