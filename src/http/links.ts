/** Builds absolute links under the registry's base address (origin plus any mount path). */
export class Links {
  constructor(readonly base: string) {}

  entity(id: string): string {
    return `${this.base}/v1/entities/${id}`
  }

  rendition(entityId: string, renditionId: string, extension: string): string {
    return `${this.base}/v1/entities/${entityId}/renditions/${renditionId}.${extension}`
  }

  /** `path` with query parameters; URLSearchParams percent-encodes `[` and `]`. */
  withQuery(path: string, parameters: URLSearchParams | Iterable<[string, string]>): string {
    // A request's own parameters serialised as they are, not copied into new ones first.
    const query = (parameters instanceof URLSearchParams ? parameters : new URLSearchParams([...parameters])).toString()
    return query === '' ? `${this.base}${path}` : `${this.base}${path}?${query}`
  }
}
