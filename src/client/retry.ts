export interface RetryOptions {
  /** Retries after the first attempt (default 5). 0 turns retrying off. */
  retries?: number
  /** First backoff for 5xx and network errors, doubled each time, with full jitter (default 250 ms). */
  baseDelayMs?: number
  /** No wait is longer than this (default 30 s), a `Retry-After` included. */
  maxDelayMs?: number
}

/** Whether a status is worth retrying: rate limited, or a server or gateway failure. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500
}

/**
 * How long to wait before retry number `attempt` (0-based): a 429's or 503's `Retry-After` when it gives one,
 * else exponential backoff with full jitter (AWS's "full jitter": random between 0 and the cap).
 */
export function retryDelayMs(attempt: number, retryAfter: string | null, options: Required<RetryOptions>, random = Math.random): number {
  const seconds = retryAfter === null ? Number.NaN : Number(retryAfter)
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, options.maxDelayMs)
  const date = retryAfter === null ? Number.NaN : Date.parse(retryAfter)
  if (Number.isFinite(date)) return Math.min(Math.max(0, date - Date.now()), options.maxDelayMs)
  return Math.floor(random() * Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** attempt))
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal!.reason)
    }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
