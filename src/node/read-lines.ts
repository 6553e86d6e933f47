import { createWriteStream } from 'node:fs'
import { mkdtemp, open, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable, pipeline } from 'node:stream'
import { pipeline as pipelineDone } from 'node:stream/promises'
import { createGunzip } from 'node:zlib'
import { OverlongLine } from '../warehouse/record-limits.js'

/** The source name that means standard input. */
export const STANDARD_INPUT = '-'

export interface ReadLinesOptions {
  /** Bytes read from a file at a time. */
  chunkSize?: number
  /** What `-` reads (default `process.stdin`). */
  standardInput?: AsyncIterable<Uint8Array>
  /** Called with the bytes of each chunk read from a file (compressed ones for gzip): how far it has come. */
  onRead?: (bytes: number) => void
  /**
   * A line longer than this many bytes is given as an `OverlongLine`, read past as it streams
   * (never held whole, nor decoded): without it, a line of any length is held and given.
   */
  maxLineBytes?: number
}

/**
 * The lines of a file, or of standard input for `-` (UTF-8; `\n` or `\r\n`), streamed: memory does
 * not grow with the input. Gzip, recognised by its first two bytes rather than by a name, is
 * decompressed as it streams, so that `x.ndjson.gz` and `gzip -c x.ndjson | … -` both work.
 */
export function readLines(source: string, options?: ReadLinesOptions & { maxLineBytes?: undefined }): AsyncGenerator<string>
export function readLines(source: string, options: ReadLinesOptions): AsyncGenerator<string | OverlongLine>
export function readLines(
  source: string,
  { chunkSize = 64 * 1024, standardInput = process.stdin, onRead, maxLineBytes = Infinity }: ReadLinesOptions = {},
): AsyncGenerator<string | OverlongLine> {
  return splitLines(gunzipIfCompressed(source === STANDARD_INPUT ? standardInput : readChunks(source, chunkSize, onRead)), maxLineBytes)
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

const NEWLINE = 0x0a

/**
 * Lines from UTF-8 chunks. The bytes of a line not yet ended are kept as they came, and its lines
 * decoded once ended, a chunk's together (then split as text). A line past `maxLineBytes` is dropped
 * as it comes, its bytes counted to its end, and an `OverlongLine` given in its place: a 12 MB line
 * held whole cost 3.6 s of CPU, each chunk appended to it and the text split again.
 */
async function* splitLines(chunks: AsyncIterable<Uint8Array>, maxLineBytes: number): AsyncGenerator<string | OverlongLine> {
  const decoder = new TextDecoder('utf-8')
  /** The line not yet ended: its bytes, or only their count once past `maxLineBytes`. */
  let pending: Uint8Array[] = []
  let pendingBytes = 0
  let overlong = false
  const ended = (text: string) => (text.endsWith('\r') ? text.slice(0, -1) : text)
  /** Adds bytes to the line not yet ended. */
  const keep = (bytes: Uint8Array) => {
    pendingBytes += bytes.length
    if (overlong) return
    if (pendingBytes > maxLineBytes) {
      overlong = true
      pending = []
    } else pending.push(bytes)
  }
  for await (const chunk of chunks) {
    let start = 0
    if (overlong) {
      // The overlong line ends at this chunk's first newline, if it has one.
      const end = chunk.indexOf(NEWLINE)
      if (end === -1) {
        pendingBytes += chunk.length
        continue
      }
      yield new OverlongLine(pendingBytes + end)
      ;[pending, pendingBytes, overlong, start] = [[], 0, false, end + 1]
    }
    const last = chunk.lastIndexOf(NEWLINE)
    if (last >= start) {
      // The lines ended in this chunk, the one before it pending included, decoded at once.
      const firstBytes = pendingBytes + (chunk.indexOf(NEWLINE, start) - start)
      pending.push(chunk.subarray(start, last))
      const lines = decoder.decode(pending.length === 1 ? pending[0] : Buffer.concat(pending), { stream: true }).split('\n')
      for (const [index, line] of lines.entries()) {
        // Only the first can be long: the others lie within one chunk.
        const bytes = index === 0 ? firstBytes : line.length * 3 > maxLineBytes ? Buffer.byteLength(line) : 0
        yield bytes > maxLineBytes ? new OverlongLine(bytes) : ended(line)
      }
      ;[pending, pendingBytes, start] = [[], 0, last + 1]
    }
    if (start < chunk.length) keep(chunk.subarray(start))
  }
  if (overlong) return yield new OverlongLine(pendingBytes)
  const rest = decoder.decode(Buffer.concat(pending))
  if (rest !== '') yield ended(rest)
}
