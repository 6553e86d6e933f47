import { Readable } from 'node:stream'
import { createBudget, type Budget } from './budget.js'
import { takeStreamChunkSize } from './stream-chunk-size.js'

/** A range of an object read whole, and the object's size. */
export interface ReadWindow {
  chunks: readonly Uint8Array[]
  size: number
}

export interface WindowedDownloadOptions {
  /** The first byte, and the last one asked for (inclusive; Infinity: to the end). */
  from: number
  last: number
  /** Reads the bytes `from` to `to` (inclusive) whole, or null when there is no such object. */
  read(from: number, to: number, signal: AbortSignal): Promise<ReadWindow | null>
  /** What the windows of every download share; `DOWNLOAD_BUDGET` by default. */
  budget?: Budget
  /** How long a window waits untaken before it is let go, to be read again if its client asks. */
  idleMs?: number
}

/**
 * What the downloads read from object storage may hold at once, all of them together: 1,000
 * clients that stopped reading each held some 160 KB of a streamed answer (its socket's reads of
 * 64 KiB, in two stages).
 */
export const DOWNLOAD_BUDGET = createBudget(32 * 1024 * 1024)
/** The first window, small so that the first bytes go out soon; then each twice the last, up to the most. */
const FIRST_WINDOW = 64 * 1024
const MOST_WINDOW = 8 * 1024 * 1024
/**
 * The least window a download waits for when the budget is short, rather than go on with less: a
 * range is a call to the object store, and a crowd of clients whose buffers take megabytes each
 * asked for thousands of 16 KiB ones (no less memory at 1,000 stalled downloads, within noise).
 */
const LEAST_WINDOW = 256 * 1024
const IDLE_MS = 1000

/**
 * A download read a window at a time from a store that answers ranges (object storage), each window
 * whole (its answer read to the end: no connection waits for the client), within a budget that all
 * downloads share; the client is handed pieces of it. A window its client leaves untaken for
 * `idleMs` is let go and read again if the client asks: a client that stopped reading holds one
 * piece, and none of the budget. Resolves once the first window is read (null: no such object), so
 * that an object store that is away fails the download before it starts.
 */
export async function windowedDownload({ from, last, read, budget = DOWNLOAD_BUDGET, idleMs = IDLE_MS }: WindowedDownloadOptions): Promise<Readable | null> {
  const cancelled = new AbortController()
  /** Bytes `taken` up to `fetched` are read and not yet handed on, in `pending`, within `granted` bytes of the budget. */
  let taken = from
  let fetched = from
  let pending: Uint8Array[] = []
  let granted = 0
  let window = FIRST_WINDOW
  let end = last
  let idle: ReturnType<typeof setTimeout> | undefined

  const letGo = () => {
    pending = []
    fetched = taken
    budget.give(granted)
    granted = 0
  }
  const fetchWindow = async (): Promise<boolean> => {
    letGo()
    granted = await budget.take(window, Math.min(window, LEAST_WINDOW), cancelled.signal)
    const to = Math.min(end, fetched + granted - 1)
    const answer = await read(fetched, to, cancelled.signal)
    if (answer === null) return false
    end = Math.min(end, answer.size - 1)
    const expected = Math.min(to, end) - fetched + 1
    const length = answer.chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0)
    if (length !== Math.max(0, expected)) throw new Error(`the object store sent ${length} bytes of ${expected}`)
    pending = answer.chunks.filter((chunk) => chunk.byteLength > 0)
    fetched += length
    window = Math.min(MOST_WINDOW, window * 2)
    return true
  }
  /** Untaken for a while: the client stopped reading. Its window goes back to the budget, and it starts again small. */
  const stopped = () => {
    letGo()
    window = FIRST_WINDOW
  }
  /**
   * What is handed to the client at a time, copied out of the window, so that a client that stopped
   * reading holds no more than this once the window is let go: smaller in a crowd (`takeStreamChunkSize`).
   */
  let piece: ReturnType<typeof takeStreamChunkSize> | undefined
  const nextPiece = (): Uint8Array => {
    const chunk = pending[0]!
    const size = (piece ??= takeStreamChunkSize()).size
    const copy = new Uint8Array(chunk.subarray(0, size))
    if (chunk.byteLength > size) pending[0] = chunk.subarray(size)
    else pending.shift()
    taken += copy.byteLength
    return copy
  }

  try {
    if (!(await fetchWindow())) {
      letGo()
      return null
    }
  } catch (error) {
    letGo()
    throw error
  }

  idle = setTimeout(stopped, idleMs)
  return new Readable({
    // Nothing is read ahead of the client: a piece is handed on when it asks for one.
    highWaterMark: 0,
    read() {
      clearTimeout(idle)
      const handOn = () => {
        if (taken > end) return void this.push(null)
        this.push(nextPiece())
        if (taken > end) this.push(null)
        else idle = setTimeout(stopped, idleMs)
      }
      if (pending.length > 0 || taken > end) return handOn()
      fetchWindow().then(
        (found) => (found ? handOn() : this.destroy(new Error('the object is gone'))),
        (error: unknown) => this.destroy(error as Error),
      )
    },
    destroy(error, callback) {
      clearTimeout(idle)
      cancelled.abort()
      letGo()
      piece?.release()
      callback(error)
    },
  })
}
