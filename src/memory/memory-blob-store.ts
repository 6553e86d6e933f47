import type { BlobStore } from '../ports/blob-store.js'

/** Blobs in memory: for tests and examples. */
export function createMemoryBlobStore(): BlobStore {
  const blobs = new Map<string, { bytes: Uint8Array; version: string }>()
  let writes = 0
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
      const blob = blobs.get(key)
      if (!blob) return null
      const bytes = range ? blob.bytes.slice(range.start, range.end + 1) : blob.bytes
      return new Blob([new Uint8Array(bytes)]).stream()
    },
    delete: async (key) => void blobs.delete(key),
  }
}
