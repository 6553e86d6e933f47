/** The dependencies a request can find away; each has its own 503 code (`store_unavailable`, …). */
export type Dependency = 'store' | 'blobs' | 'rate_limit'

/**
 * A dependency that is away (a database restarting, object storage not answering, Redis down):
 * thrown by a port's implementation, answered as a 503 naming the dependency, with `Retry-After`.
 * A custom store or blob store throws it for the same answer; anything else it throws is a 500.
 */
export class DependencyUnavailableError extends Error {
  override readonly name = 'DependencyUnavailableError'
  constructor(
    readonly dependency: Dependency,
    message: string,
    /** What `Retry-After` says, in seconds. */
    readonly retryAfterSeconds = 1,
    options?: ErrorOptions,
  ) {
    super(message, options)
  }
}

/** Whether `error` is one (by name too: two copies of this package each have their own class). */
export function isDependencyUnavailable(error: unknown): error is DependencyUnavailableError {
  return error instanceof DependencyUnavailableError || (error instanceof Error && error.name === 'DependencyUnavailableError' && 'dependency' in error)
}
