import { Readable } from 'node:stream'

export interface WindowedDownloadOptions {
  /** The first window's bytes, read before the download was handed on (so that a missing object or an outage answers at once). */
  first: readonly Uint8Array[]
  /** The first byte after them, and the download's last byte (inclusive). */
  from: number
  end: number
  /** The size of each next window, and `release` once the download ends. */
  windows: { next(): number; release(): void }
  /** Reads the bytes `from` to `to` (inclusive) whole; `signal` aborts it when the download is cancelled. */
  read(from: number, to: number, signal: AbortSignal): Promise<readonly Uint8Array[]>
}

/**
 * A download from an object store read a window at a time, each window whole, the next only once the
 * consumer has taken the last: what a client that stopped reading holds is one window, and no
 * connection to the object store (its answer was read to its end).
 */
export function windowedDownload({ first, from, end, windows, read }: WindowedDownloadOptions): Readable {
  let position = from
  const cancelled = new AbortController()
  const pushAll = (stream: Readable, chunks: readonly Uint8Array[]) => {
    for (const chunk of chunks) if (chunk.byteLength > 0) stream.push(chunk)
    if (position > end) stream.push(null)
  }
  return new Readable({
    // Nothing is read ahead: a window is asked for once the last one has been taken.
    highWaterMark: 0,
    construct(callback) {
      pushAll(this, first)
      callback()
    },
    read() {
      if (position > end) return
      const to = Math.min(end, position + windows.next() - 1)
      read(position, to, cancelled.signal).then(
        (chunks) => {
          const length = chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0)
          if (length !== to - position + 1) return this.destroy(new Error(`the object store sent ${length} bytes of ${to - position + 1}`))
          position = to + 1
          pushAll(this, chunks)
        },
        (error: unknown) => this.destroy(error as Error),
      )
    },
    destroy(error, callback) {
      cancelled.abort()
      windows.release()
      callback(error)
    },
  })
}
