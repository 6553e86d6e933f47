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
