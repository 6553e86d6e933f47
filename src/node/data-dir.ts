import { mkdir } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { createFileBlobStore } from '../blobs/file-blob-store.js'
import { openStore, type KyselyStore } from '../kysely/index.js'
import type { BlobStore } from '../ports/blob-store.js'
import { packageFile } from './package-files.js'

export interface DataOptions {
  data: string
  database?: string
  /** A streaming replica of the PostgreSQL `database`, which the store's reads go to. */
  readDatabase?: string
  /** The most connections to a PostgreSQL `database` (`--pool-size`; default 10). */
  poolSize?: number
  /** Told when waiting change-feed requests read the feed's head instead of hearing PostgreSQL's `NOTIFY` (through a transaction pooler). */
  onFeedPolling?: (reason: string) => void
  /** Where rendition bytes live instead of DIR/blobs: a directory, or `s3://bucket/prefix`. */
  blobs?: string
}

export interface OpenedData {
  store: KyselyStore
  blobs: BlobStore
}

/**
 * The store (SQLite in the data dir, or `--database`) and the blob directory of a data dir.
 * `searchInDatabase`: the search index lives in the store's database (a PGlite one then loads the
 * extensions it needs).
 */
export async function openData({ data, database, readDatabase, poolSize, onFeedPolling, blobs }: DataOptions, { searchInDatabase = false } = {}): Promise<OpenedData> {
  const directory = resolve(data)
  await mkdir(directory, { recursive: true })
  const pgliteExtensions = searchInDatabase && database?.startsWith('pglite:') ? await (await import('../postgres-search/index.js')).pgliteSearchExtensions() : undefined
  const store = await openStore(database ?? join(directory, 'registry.sqlite'), {
    ...(pgliteExtensions ? { pgliteExtensions } : {}),
    ...(readDatabase === undefined ? {} : { readFrom: readDatabase }),
    ...(poolSize === undefined ? {} : { poolSize }),
    ...(onFeedPolling === undefined ? {} : { onFeedPolling }),
  })
  return { store, blobs: await openBlobs(blobs ?? join(directory, 'blobs')) }
}

/** `s3://bucket/prefix` (S3 settings from the standard AWS environment), or a directory. */
async function openBlobs(location: string): Promise<BlobStore> {
  if (!location.startsWith('s3://')) return createFileBlobStore(location)
  // Loaded only here: the AWS SDK is an optional peer dependency.
  const { createS3BlobStore, parseS3Url } = await import('../s3/index.js')
  return createS3BlobStore(parseS3Url(location))
}

/** The demo data set bundled with the package (`demo/entities.jsonl`). */
export function bundledDemoFile(): string {
  return packageFile('demo/entities.jsonl')
}
