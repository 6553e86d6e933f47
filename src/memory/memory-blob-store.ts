import type { BlobStore, ByteRange } from '../ports/blob-store.js'

/** Blobs in memory: for tests and examples. */
export function createMemoryBlobStore(): BlobStore {
  const blobs = new Map<string, { bytes: Uint8Array<ArrayBuffer>; version: string }>()
  let writes = 0
  const read = (key: string, range?: ByteRange): Uint8Array<ArrayBuffer> | null => {
    const blob = blobs.get(key)
    if (!blob) return null
    return range ? blob.bytes.slice(range.start, range.end + 1) : blob.bytes.slice()
  }
  return {
    async put(key, bytes) {
      const copy = bytes instanceof Uint8Array ? bytes.slice() : new Uint8Array(await new Response(bytes).arrayBuffer())
      blobs.set(key, { bytes: copy, version: `m${++writes}` })
    },
    async stat(key) {
      const blob = blobs.get(key)
      return blob ? { size: blob.bytes.length, version: blob.version } : null
    },
    async get(key, range) {
      const bytes = read(key, range)
      return bytes && new Blob([bytes]).stream()
    },
    read: async (key, range) => read(key, range),
    delete: async (key) => void blobs.delete(key),
  }
}
