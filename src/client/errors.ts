/** A JSON:API error object, as the registry answers them. */
export interface ApiErrorObject {
  status?: string
  code?: string
  title?: string
  detail?: string
  source?: { parameter?: string; pointer?: string }
}

/** A request the registry answered with an error; carries its JSON:API error objects. */
export class RegistryError extends Error {
  override readonly name = 'RegistryError'
  constructor(
    readonly status: number,
    readonly errors: ApiErrorObject[],
    readonly url: string,
  ) {
    const first = errors[0]
    super(`${status}${first?.code ? ` ${first.code}` : ''}: ${first?.detail ?? first?.title ?? 'request failed'} (${url})`)
  }

  /** The first error's `code`, e.g. `invalid_filter`. */
  get code(): string | undefined {
    return this.errors[0]?.code
  }
}

/** An error answer turned into a RegistryError; a body that is not a JSON:API error document still gives one. */
export async function registryErrorOf(response: Response, url: string): Promise<RegistryError> {
  let errors: ApiErrorObject[] = [{ status: String(response.status), title: response.statusText }]
  try {
    const document = (await response.json()) as { errors?: unknown }
    if (Array.isArray(document.errors) && document.errors.length > 0) errors = document.errors as ApiErrorObject[]
  } catch {
    // Not JSON (a proxy's page, say): the status is all there is.
  }
  return new RegistryError(response.status, errors, url)
}
