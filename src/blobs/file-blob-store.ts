import { createReadStream } from 'node:fs'
import { mkdir, rename, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import type { BlobInfo, BlobStore } from '../ports/blob-store.js'

const SAFE_KEY = /^[0-9A-Za-z_-]+$/

/** Blobs as files in one directory, written atomically (a temporary file, then rename). */
export function createFileBlobStore(directory: string): BlobStore {
  const pathOf = (key: string) => {
    if (!SAFE_KEY.test(key)) throw new Error('invalid blob key')
    return join(directory, key)
  }
  return {
    async put(key, bytes) {
      const path = pathOf(key)
      await mkdir(directory, { recursive: true })
      const temporary = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`
      await writeFile(temporary, bytes)
      await rename(temporary, path)
    },
    stat: (key) => statOf(pathOf(key)),
    async get(key, range) {
      const path = pathOf(key)
      if ((await statOf(path)) === null) return null
      // A stream read lazily: memory does not grow with the file, and cancelling it closes the file.
      return Readable.toWeb(createReadStream(path, range ?? {})) as ReadableStream<Uint8Array>
    },
  }
}

async function statOf(path: string): Promise<BlobInfo | null> {
  try {
    const { size, mtimeMs } = await stat(path)
    return { size, version: `${size.toString(36)}-${Math.floor(mtimeMs).toString(36)}` }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw error
  }
}
