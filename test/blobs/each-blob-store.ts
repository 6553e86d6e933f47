/** Every blob store a suite runs against; `describeEachBlobStore` repeats a suite for each one. */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { S3Client } from '@aws-sdk/client-s3'
import { afterAll, afterEach, beforeAll, beforeEach, describe } from 'vitest'
import { createFileBlobStore } from '../../src/blobs/file-blob-store.js'
import { createMemoryBlobStore } from '../../src/memory/memory-blob-store.js'
import type { BlobStore } from '../../src/ports/blob-store.js'
import { createS3BlobStore } from '../../src/s3/index.js'
import { S3_CREDENTIALS, startS3Server, type S3Server } from '../support/s3-server.js'

export interface BlobStoreKind {
  name: string
  /** Starts what every store of this kind needs (a server), once per suite. */
  setUp?(): Promise<() => Promise<void>>
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
  s3Kind(),
]

/** S3 through the AWS SDK against s3rver, each store under a fresh prefix of one bucket. */
function s3Kind(): BlobStoreKind {
  let server: S3Server | undefined
  let stores = 0
  return {
    name: 's3',
    async setUp() {
      server = await startS3Server()
      return () => server!.close()
    },
    async open() {
      const client = new S3Client({ endpoint: server!.endpoint, forcePathStyle: true, region: 'us-east-1', credentials: S3_CREDENTIALS })
      const blobs = createS3BlobStore({ client, bucket: server!.bucket, prefix: `store-${++stores}/` })
      return { blobs, dispose: async () => client.destroy() }
    },
  }
}

export function describeEachBlobStore(title: string, suite: (blobs: () => BlobStore) => void): void {
  for (const kind of blobStoreKinds) {
    describe(`${title} [${kind.name}]`, () => {
      let tearDown: (() => Promise<void>) | undefined
      beforeAll(async () => {
        tearDown = await kind.setUp?.()
      })
      afterAll(async () => {
        await tearDown?.()
      })
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
