import { createWriteStream } from 'node:fs'
import { mkdtemp, open, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable, pipeline } from 'node:stream'
import { pipeline as pipelineDone } from 'node:stream/promises'
import { createGunzip } from 'node:zlib'

/** The source name that means standard input. */
export const STANDARD_INPUT = '-'

export interface ReadLinesOptions {
  /** Bytes read from a file at a time. */
  chunkSize?: number
  /** What `-` reads (default `process.stdin`). */
  standardInput?: AsyncIterable<Uint8Array>
  /** Called with the bytes of each chunk read from a file (compressed ones for gzip): how far it has come. */
  onRead?: (bytes: number) => void
}

/**
 * The lines of a file, or of standard input for `-` (UTF-8; `\n` or `\r\n`), streamed: memory does
 * not grow with the input. Gzip, recognised by its first two bytes rather than by a name, is
 * decompressed as it streams, so that `x.ndjson.gz` and `gzip -c x.ndjson | … -` both work.
 */
export function readLines(source: string, { chunkSize = 64 * 1024, standardInput = process.stdin, onRead }: ReadLinesOptions = {}): AsyncGenerator<string> {
  return splitLines(gunzipIfCompressed(source === STANDARD_INPUT ? standardInput : readChunks(source, chunkSize, onRead)))
}

/**
 * Standard input copied to a temporary file, byte for byte (gzip stays compressed), for an input
 * that must be read twice; `remove` deletes it.
 */
export async function spoolStandardInput(standardInput: AsyncIterable<Uint8Array> = process.stdin): Promise<{ file: string; remove(): Promise<void> }> {
  const directory = await mkdtemp(join(tmpdir(), 'entity-registry-stdin-'))
  const remove = () => rm(directory, { recursive: true, force: true })
  const file = join(directory, 'input')
  try {
    await pipelineDone(standardInput, createWriteStream(file))
  } catch (error) {
    await remove()
    throw error
  }
  return { file, remove }
}

/**
 * A file's bytes in chunks. Not a read stream through node:readline: under Deno (2.9) readline's
 * async iterator sometimes ends early on a loaded machine, and an import would lose the rest of the
 * file without a word (an import of the demo data applied 517 of 685 lines).
 */
async function* readChunks(file: string, chunkSize: number, onRead?: (bytes: number) => void): AsyncGenerator<Uint8Array> {
  const handle = await open(file, 'r')
  try {
    for (;;) {
      // A new buffer each time: gunzip may still hold the last one.
      const buffer = new Uint8Array(chunkSize)
      const { bytesRead } = await handle.read(buffer, 0, chunkSize, null)
      if (bytesRead === 0) return
      onRead?.(bytesRead)
      yield buffer.subarray(0, bytesRead)
    }
  } finally {
    await handle.close()
  }
}

const GZIP_MAGIC = [0x1f, 0x8b]

async function* gunzipIfCompressed(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  const iterator = chunks[Symbol.asyncIterator]()
  // A pipe may deliver the first byte alone: gather two before deciding.
  let head: Uint8Array = new Uint8Array(0)
  while (head.length < GZIP_MAGIC.length) {
    const next = await iterator.next()
    if (next.done) break
    head = head.length === 0 ? next.value : Buffer.concat([head, next.value])
  }
  const all = (async function* () {
    try {
      if (head.length > 0) yield head
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value
    } finally {
      await iterator.return?.()
    }
  })()
  if (head[0] !== GZIP_MAGIC[0] || head[1] !== GZIP_MAGIC[1]) return yield* all
  // pipeline destroys every stream on an error, so iterating gunzip throws it; leaving the
  // iteration early destroys gunzip, and with it the source.
  const gunzip = pipeline(Readable.from(all, { objectMode: false }), createGunzip(), () => {})
  try {
    yield* gunzip as AsyncIterable<Uint8Array>
  } catch (error) {
    // zlib's own messages ("unexpected end of file") do not say what was being read.
    if (!String((error as NodeJS.ErrnoException).code).startsWith('Z_')) throw error
    throw new Error(`gzip: ${(error as Error).message}`, { cause: error })
  }
}

async function* splitLines(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8')
  let pending = ''
  for await (const chunk of chunks) {
    pending += decoder.decode(chunk, { stream: true })
    const lines = pending.split('\n')
    pending = lines.pop()!
    for (const line of lines) yield line.endsWith('\r') ? line.slice(0, -1) : line
  }
  pending += decoder.decode()
  if (pending !== '') yield pending.endsWith('\r') ? pending.slice(0, -1) : pending
}
