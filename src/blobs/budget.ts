/**
 * A quantity (bytes held, calls in flight) that many holders share: each takes what it may and
 * gives it back; one that would go past the limit waits (in turn) until others give back enough.
 * What one holder takes at least is always granted when nothing else is held, so no holder waits
 * for ever.
 */
export interface Budget {
  /** Up to `wanted` and at least `least`: waits while less is free; fails if `signal` aborts meanwhile. */
  take(wanted: number, least: number, signal?: AbortSignal): Promise<number>
  give(amount: number): void
  /** Taken and not given back. */
  held(): number
}

export function createBudget(limit: number): Budget {
  let held = 0
  const waiting: { wanted: number; least: number; grant(amount: number): void }[] = []
  const grantable = (least: number) => held === 0 || held + least <= limit
  /** `wanted`, or what is free, but never less than `least` (past the limit only when nothing else is held). */
  const grant = (wanted: number, least: number) => {
    const amount = Math.min(wanted, Math.max(least, limit - held))
    held += amount
    return amount
  }
  const serveWaiting = () => {
    while (waiting.length > 0 && grantable(waiting[0]!.least)) {
      const next = waiting.shift()!
      next.grant(grant(next.wanted, next.least))
    }
  }
  return {
    take(wanted, least, signal) {
      if (waiting.length === 0 && grantable(least)) return Promise.resolve(grant(wanted, least))
      return new Promise<number>((resolve, reject) => {
        const entry = {
          wanted,
          least,
          grant: (amount: number) => {
            signal?.removeEventListener('abort', abort)
            resolve(amount)
          },
        }
        const abort = () => {
          waiting.splice(waiting.indexOf(entry), 1)
          reject(signal!.reason)
        }
        signal?.addEventListener('abort', abort, { once: true })
        waiting.push(entry)
      })
    },
    give(amount) {
      held -= amount
      serveWaiting()
    },
    held: () => held,
  }
}
