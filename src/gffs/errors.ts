export type GffsErrorCode = 'invalid_filter' | 'unsupported_field' | 'nested_field_path' | 'free_text_not_allowed'

/** A filter string that does not parse or is not allowed; names the term and its position. */
export class GffsError extends Error {
  override readonly name = 'GffsError'
  constructor(
    readonly code: GffsErrorCode,
    message: string,
    /** The offending term as written, or null when the error is about the whole string. */
    readonly term: string | null,
    /** Zero-based character offset of the term in the filter string. */
    readonly position: number,
  ) {
    super(message)
  }
}
