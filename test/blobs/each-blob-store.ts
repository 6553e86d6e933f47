/** Every blob store a suite runs against; `describeEachBlobStore` repeats a suite for each one. */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe } from 'vitest'
import { createFileBlobStore } from '../../src/blobs/file-blob-store.js'
import { createMemoryBlobStore } from '../../src/memory/memory-blob-store.js'
import type { BlobStore } from '../../src/ports/blob-store.js'

export interface BlobStoreKind {
  name: string
  /** A fresh, empty store, and how to remove what it left. */
  open(): Promise<{ blobs: BlobStore; dispose(): Promise<void> }>
}

export const blobStoreKinds: BlobStoreKind[] = [
  { name: 'memory', open: async () => ({ blobs: createMemoryBlobStore(), dispose: async () => {} }) },
  {
    name: 'file',
    async open() {
      const directory = await mkdtemp(join(tmpdir(), 'er-blobs-'))
      return { blobs: createFileBlobStore(directory), dispose: () => rm(directory, { recursive: true, force: true }) }
    },
  },
]

export function describeEachBlobStore(title: string, suite: (blobs: () => BlobStore) => void): void {
  for (const kind of blobStoreKinds) {
    describe(`${title} [${kind.name}]`, () => {
      let opened: Awaited<ReturnType<BlobStoreKind['open']>> | undefined
      beforeEach(async () => {
        opened = await kind.open()
      })
      afterEach(async () => {
        await opened?.dispose()
        opened = undefined
      })
      suite(() => opened!.blobs)
    })
  }
}
