import { mkdir } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { createFileBlobStore } from '../blobs/file-blob-store.js'
import { openStore, type KyselyStore } from '../kysely/index.js'
import type { BlobStore } from '../ports/blob-store.js'
import { packageFile } from './package-files.js'

export interface DataOptions {
  data: string
  database?: string
}

export interface OpenedData {
  store: KyselyStore
  blobs: BlobStore
}

/** The store (SQLite in the data dir, or `--database`) and the blob directory of a data dir. */
export async function openData({ data, database }: DataOptions): Promise<OpenedData> {
  const directory = resolve(data)
  await mkdir(directory, { recursive: true })
  const store = await openStore(database ?? join(directory, 'registry.sqlite'))
  return { store, blobs: createFileBlobStore(join(directory, 'blobs')) }
}

/** The demo data set bundled with the package (`demo/entities.jsonl`). */
export function bundledDemoFile(): string {
  return packageFile('demo/entities.jsonl')
}
