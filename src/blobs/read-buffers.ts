/**
 * Buffers that downloads are read whole into, reused once their answer has gone. A buffer made
 * afresh for each download (as `readFile` makes one) is memory outside V8's heap that V8 counts: its
 * growth starts full collections of the heap (one every 60 downloads of 327 KB, bench/README.md),
 * whose cost grows with the heap, so `serve` spent twice the CPU a download of a hand-written server.
 *
 * Buffers come in sizes of powers of two (a read takes the smallest that holds it), all those
 * taken together within `limit` bytes: past it, `take` gives none and the download streams
 * instead. Of those given back, up to `keep` bytes are kept for the next reads; the rest are let go.
 */
export interface ReadBuffers {
  /** A buffer of at least `length` bytes, or null when those taken would pass the limit. */
  take(length: number): Uint8Array | null
  /**
   * Gives back a buffer `take` gave (once): `reusable` when nothing reads it any more, so that it
   * may be read into again; otherwise it is let go (a Web `Response` may still be reading it).
   */
  give(buffer: Uint8Array, reusable: boolean): void
}

/** The smallest buffer made: smaller reads would gain little from reuse, and waste little of this. */
const SMALLEST = 16 * 1024

export function createReadBuffers({ limit, keep }: { limit: number; keep: number }): ReadBuffers {
  /** Buffers given back and kept, by size. */
  const free = new Map<number, Uint8Array[]>()
  let taken = 0
  let kept = 0
  const sizeFor = (length: number) => Math.max(SMALLEST, 2 ** Math.ceil(Math.log2(Math.max(length, 1))))
  return {
    take(length) {
      const size = sizeFor(length)
      if (taken + size > limit) return null
      taken += size
      const reused = free.get(size)?.pop()
      if (reused === undefined) return new Uint8Array(size)
      kept -= size
      return reused
    },
    give(buffer, reusable) {
      const size = buffer.byteLength
      taken -= size
      if (!reusable || kept + size > keep) return
      kept += size
      const sameSize = free.get(size)
      if (sameSize === undefined) free.set(size, [buffer])
      else sameSize.push(buffer)
    },
  }
}
