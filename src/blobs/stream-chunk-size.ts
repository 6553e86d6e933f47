/**
 * How much a streamed download reads at a time. A download whose client stopped reading holds about
 * two chunks in the process (one waiting for the socket, one read ahead), so the size shrinks with
 * the number of streams open: 64 KiB each while up to 64 are open (8 MiB at most), 16 KiB for
 * those opened up to 256, 8 KiB past that, so 1,000 stalled downloads hold about 26 MB rather than
 * 128 MB while a few fast ones still read in large chunks.
 */
const CHUNK_SIZES: readonly { upTo: number; size: number }[] = [
  { upTo: 64, size: 64 * 1024 },
  { upTo: 256, size: 16 * 1024 },
  { upTo: Infinity, size: 8 * 1024 },
]

let open = 0

/** Takes a chunk size for a stream being opened; `release` when it closes (once; later calls do nothing). */
export function takeStreamChunkSize(): { size: number; release(): void } {
  const size = CHUNK_SIZES.find((tier) => open < tier.upTo)!.size
  open++
  let released = false
  return {
    size,
    release() {
      if (released) return
      released = true
      open--
    },
  }
}

/**
 * Bytes that downloads read whole a window at a time (from an object store) may hold together: each
 * window is at most this shared by the streams open, so 1,000 clients that stopped reading hold
 * 32 MB, not the 160 KB each that a streamed HTTP answer from the object store kept (its socket's
 * reads of 64 KiB, in two stages).
 */
const WINDOW_BUDGET = 32 * 1024 * 1024
/** The first window: small, so that the first bytes go out after a short read. */
const FIRST_WINDOW = 64 * 1024
const MIN_WINDOW = 16 * 1024
const MAX_WINDOW = 8 * 1024 * 1024

/**
 * Takes window sizes for a download being opened: each twice the last (fewer requests for a long
 * download), never past its share of the budget as the streams open now share it. `release` when it
 * closes (once; later calls do nothing).
 */
export function takeDownloadWindows(): { next(): number; release(): void } {
  const stream = takeStreamChunkSize()
  let last = 0
  return {
    next() {
      const share = Math.max(MIN_WINDOW, Math.floor(WINDOW_BUDGET / Math.max(1, open)))
      last = Math.min(MAX_WINDOW, share, last === 0 ? FIRST_WINDOW : last * 2)
      return last
    },
    release: stream.release,
  }
}
