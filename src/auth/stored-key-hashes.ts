/** Reads of the whole set are at most this often, whatever the number of requests. */
const READ_INTERVAL_MS = 1000

export interface StoredKeyHashes {
  /** Whether the hash was among the stored keys' at the last read (false before any). */
  has(hash: string): boolean
  /**
   * The hashes of a read that begins after this call: a key stored a moment ago is in it. Callers
   * share one read, begun at least `READ_INTERVAL_MS` after the previous one began (and once it ended).
   */
  readAfterNow(): Promise<ReadonlySet<string>>
}

/**
 * The SHA-256 hashes of the stored keys (never the keys), read from the store as one set. Past an
 * address's allowance of failed authentications, a token is looked up only when its hash is in the
 * set: made-up tokens then cost the store one read a second in all, however many arrive.
 */
export function createStoredKeyHashes(listHashes: () => Promise<string[]>): StoredKeyHashes {
  let hashes: ReadonlySet<string> = new Set()
  let lastReadStarted = -Infinity
  // The read under way (settled, never rejected), after which the next may begin.
  let reading: Promise<unknown> = Promise.resolve()
  // The read the callers since the last one began are waiting for, not begun yet.
  let nextRead: Promise<ReadonlySet<string>> | undefined

  function readAfterNow(): Promise<ReadonlySet<string>> {
    if (nextRead !== undefined) return nextRead
    const read = reading
      .then(() => delay(lastReadStarted + READ_INTERVAL_MS - performance.now()))
      .then(async () => {
        // Callers from now on need a later read: this one may miss what is stored after it begins.
        nextRead = undefined
        lastReadStarted = performance.now()
        hashes = new Set(await listHashes())
        return hashes
      })
    nextRead = read
    reading = read.catch(() => {})
    return read
  }

  return { has: (hash) => hashes.has(hash), readAfterNow }
}

const delay = (ms: number) => (ms > 0 ? new Promise<void>((resolve) => setTimeout(resolve, ms)) : undefined)
