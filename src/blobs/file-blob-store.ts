import { close as closeFile, createReadStream, createWriteStream, open as openFile, read as readFromFile } from 'node:fs'
import { mkdir, readFile, rename, rm, stat } from 'node:fs/promises'
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
    async read(key, range, into) {
      try {
        if (range === undefined) {
          const bytes = await readFile(pathOf(key))
          // A plain Uint8Array view of the Buffer (no copy), as every store answers.
          return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)
        }
        const length = range.end - range.start + 1
        const bytes = into ?? new Uint8Array(length)
        return bytes.subarray(0, await readInto(pathOf(key), bytes, range.start, length))
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
        throw error
      }
    },
    delete: (key) => rm(pathOf(key), { force: true }),
  }
}

/**
 * Reads `length` bytes from `position` of the file into `bytes`, and tells how many it read: by
 * descriptor, with node:fs's callbacks (a `FileHandle` and its promises cost a download more).
 */
function readInto(path: string, bytes: Uint8Array, position: number, length: number): Promise<number> {
  return new Promise((resolve, reject) => {
    openFile(path, 'r', (openError, fd) => {
      if (openError) return reject(openError)
      readFromFile(fd, bytes, 0, length, position, (readError, bytesRead) => {
        closeFile(fd, (closeError) => {
          const error = readError ?? closeError
          if (error) reject(error)
          else resolve(bytesRead)
        })
      })
    })
  })
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
