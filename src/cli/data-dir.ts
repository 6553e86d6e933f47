import { existsSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createFileBlobStore } from '../blobs/file-blob-store.js'
import { openStore, type KyselyStore } from '../kysely/index.js'
import type { BlobStore } from '../ports/blob-store.js'

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
  let directory = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(directory, 'demo', 'entities.jsonl'))) {
    const parent = dirname(directory)
    if (parent === directory) throw new Error('the bundled demo data (demo/entities.jsonl) is missing from this installation')
    directory = parent
  }
  return join(directory, 'demo', 'entities.jsonl')
}
