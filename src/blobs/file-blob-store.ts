import { createReadStream, createWriteStream } from 'node:fs'
import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import type { ReadableStream as NodeWebReadableStream } from 'node:stream/web'
import type { BlobInfo, BlobStore } from '../ports/blob-store.js'
import { nodeBackedStream } from './node-backed-stream.js'
import { takeStreamChunkSize } from './stream-chunk-size.js'

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
      const source = bytes instanceof Uint8Array ? Readable.from([bytes]) : Readable.fromWeb(bytes as NodeWebReadableStream<Uint8Array>)
      try {
        // Streamed: memory does not grow with the blob.
        await pipeline(source, createWriteStream(temporary))
        await rename(temporary, path)
      } catch (error) {
        await rm(temporary, { force: true })
        throw error
      }
    },
    stat: (key) => statOf(pathOf(key)),
    async get(key, range) {
      const path = pathOf(key)
      if ((await statOf(path)) === null) return null
      // Opened when read: memory does not grow with the file, and cancelling it closes the file. The
      // Node adapter pipes the file stream to the socket as it is; a client that stopped reading then
      // holds about two of its chunks.
      return nodeBackedStream(() => {
        const chunk = takeStreamChunkSize()
        return createReadStream(path, { ...range, highWaterMark: chunk.size }).once('close', chunk.release)
      })
    },
    async read(key, range) {
      try {
        if (range === undefined) {
          const bytes = await readFile(pathOf(key))
          // A plain Uint8Array view of the Buffer (no copy), as every store answers.
          return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
        }
        const file = await open(pathOf(key))
        try {
          const bytes = new Uint8Array(range.end - range.start + 1)
          const { bytesRead } = await file.read(bytes, 0, bytes.length, range.start)
          return bytes.subarray(0, bytesRead)
        } finally {
          await file.close()
        }
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
        throw error
      }
    },
    delete: (key) => rm(pathOf(key), { force: true }),
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
