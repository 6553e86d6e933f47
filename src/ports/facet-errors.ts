/**
 * A store refuses to count facets for a filter that would make it read more entities than it allows
 * one request (a filter on fields it keeps no counts for, matching many); answered 400 naming `filter`.
 */
export class FacetFilterTooBroadError extends Error {
  constructor(
    /** How many entities the filter's facet-field qualifiers leave to read. */
    readonly candidates: number,
    /** How many one request may read. */
    readonly limit: number,
  ) {
    super(`counting facets for this filter would read ${candidates} entities, more than the ${limit} one request may; narrow it by type, jurisdiction, localType, authority or status`)
    this.name = 'FacetFilterTooBroadError'
  }
}
