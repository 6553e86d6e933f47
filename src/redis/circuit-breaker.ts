/** What a call through the breaker gave: the call's value, or nothing since the dependency is away. */
export type Attempt<T> = { ok: true; value: T } | { ok: false; retryAfterMs: number }

export interface CircuitBreaker {
  /** Runs `call`, unless the dependency was found away less than `openMs` ago or another call is probing it. */
  attempt<T>(call: () => Promise<T>): Promise<Attempt<T>>
}

export interface CircuitBreakerOptions {
  /** How long calls are skipped after a failure before one probes the dependency again. */
  openMs: number
  /** Called once when an outage starts (with the failure) and once when it ends. */
  onAvailabilityChange?: (available: boolean, error?: unknown) => void
}

/**
 * A dependency that stops answering costs every call its whole timeout. After a failure the breaker
 * opens: calls are skipped (answered at once) for `openMs`; then one call goes through (half-open),
 * and its success closes the breaker.
 */
export function createCircuitBreaker({ openMs, onAvailabilityChange }: CircuitBreakerOptions): CircuitBreaker {
  let away = false
  let skipUntil = 0
  let probing = false
  // A success ends an outage only if no call failed since it was sent: a reply to a call sent
  // before the failure says nothing about the dependency now (and would make the outage flap).
  let failures = 0
  return {
    async attempt(call) {
      const now = Date.now()
      if (away && (now < skipUntil || probing)) return { ok: false, retryAfterMs: Math.max(0, skipUntil - now) }
      const probe = away
      const failuresBefore = failures
      probing ||= probe
      try {
        const value = await call()
        if (away && failures === failuresBefore) {
          away = false
          onAvailabilityChange?.(true)
        }
        return { ok: true, value }
      } catch (error) {
        failures++
        skipUntil = Date.now() + openMs
        if (!away) {
          away = true
          onAvailabilityChange?.(false, error)
        }
        return { ok: false, retryAfterMs: openMs }
      } finally {
        if (probe) probing = false
      }
    },
  }
}
