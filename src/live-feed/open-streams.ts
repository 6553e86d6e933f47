/** One open event stream, as the shared timer sees it. */
export interface OpenStream {
  /** Heartbeats in a row sent while the stream's buffer was full: a client that stopped reading. */
  backlog(): number
  /** Sends a comment line (proxies close a connection silent for long). */
  beat(): void
  /** Ends the stream (its key is no longer valid, its client stopped reading, shutdown). */
  end(): void
}

export interface OpenStreams {
  add(stream: OpenStream, token: string | null, keyStillValid: () => Promise<boolean>): () => void
  /** Ends every stream and those opened later at once: shutdown. */
  close(): void
  readonly closed: boolean
  /** Streams open. */
  readonly size: number
}

export interface OpenStreamsOptions {
  /** A comment line at least this often (default 15,000 ms). */
  heartbeatMs?: number
  /** Each key with streams open is checked this often (default 1000 ms): a revoked or expired key's streams end. */
  keyCheckMs?: number
}

/** Beats a stream whose client has left this many unread behind it is ended: it stopped reading. */
const MAX_UNREAD_BEATS = 4

/**
 * The event streams open, kept alive and checked by two timers whatever their number: a comment to
 * each every `heartbeatMs`, and every `keyCheckMs` one check a key (not a stream) that it is still
 * valid. The timers run only while a stream is open.
 */
export function createOpenStreams({ heartbeatMs = 15_000, keyCheckMs = 1000 }: OpenStreamsOptions = {}): OpenStreams {
  const byKey = new Map<string | null, { streams: Set<OpenStream>; keyStillValid: () => Promise<boolean> }>()
  let timers: ReturnType<typeof setInterval>[] = []
  let closed = false
  let checking = false
  let size = 0

  const each = (visit: (stream: OpenStream) => void) => {
    for (const { streams } of byKey.values()) for (const stream of [...streams]) visit(stream)
  }
  const checkKeys = async () => {
    if (checking) return
    checking = true
    try {
      await Promise.all(
        [...byKey.values()].map(async (key) => {
          const valid = await key.keyStillValid().catch(() => true)
          if (!valid) for (const stream of [...key.streams]) stream.end()
        }),
      )
    } finally {
      checking = false
    }
  }
  const start = () => {
    timers = [
      setInterval(() => each((stream) => (stream.backlog() > MAX_UNREAD_BEATS ? stream.end() : stream.beat())), heartbeatMs),
      setInterval(() => void checkKeys(), keyCheckMs),
    ]
    // Timers of streams must not hold a process that is otherwise done.
    for (const timer of timers) (timer as { unref?: () => void }).unref?.()
  }
  return {
    get closed() {
      return closed
    },
    get size() {
      return size
    },
    add(stream, token, keyStillValid) {
      if (byKey.size === 0) start()
      let key = byKey.get(token)
      if (key === undefined) byKey.set(token, (key = { streams: new Set(), keyStillValid }))
      key.streams.add(stream)
      size++
      return () => {
        size--
        key.streams.delete(stream)
        if (key.streams.size === 0 && byKey.get(token) === key) byKey.delete(token)
        if (byKey.size === 0) {
          timers.forEach(clearInterval)
          timers = []
        }
      }
    },
    close() {
      closed = true
      each((stream) => stream.end())
    },
  }
}
