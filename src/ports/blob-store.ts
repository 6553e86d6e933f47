/** An inclusive byte range, as in an HTTP `Range` header. */
export interface ByteRange {
  start: number
  end: number
}

export interface BlobInfo {
  size: number
  /** Changes whenever the bytes change (an HTTP entity tag without quotes). */
  version: string
}

/** Where rendition bytes are kept, by rendition id. */
export interface BlobStore {
  /** Stores the bytes under `key`, replacing any; a stream is consumed as it is written. */
  put(key: string, bytes: Uint8Array | ReadableStream<Uint8Array>): Promise<void>
  stat(key: string): Promise<BlobInfo | null>
  /** A stream of the bytes (of `range` when given), or null when there is no such blob. */
  get(key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array> | null>
  /**
   * Optional: the bytes at once (of `range` when given), or null. Downloads of up to 512 KiB use it
   * when present: a stream costs several times the bytes of a small rendition. Given `into` (as long
   * as the range at least), a store may read the bytes into it and answer a view of it, rather than
   * make a buffer of its own.
   */
  read?(key: string, range?: ByteRange, into?: Uint8Array): Promise<Uint8Array | null>
  /** Removes the blob; removing a missing one is not an error. */
  delete(key: string): Promise<void>
}
