import { createWriteStream, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { createGzip, gzipSync } from 'node:zlib'
import { expect, it } from 'vitest'
import { readLines } from '../../src/node/read-lines.js'
import { OverlongLine } from '../../src/warehouse/record-limits.js'

const file = (text: string) => {
  const path = join(mkdtempSync(join(tmpdir(), 'er-lines-')), 'lines.ndjson')
  writeFileSync(path, text)
  return path
}

const collect = async <Line,>(lines: AsyncIterable<Line>) => {
  const all: Line[] = []
  for await (const line of lines) all.push(line)
  return all
}

it('reads every line, across chunk boundaries that split a character, LF or CRLF', async () => {
  const lines = Array.from({ length: 500 }, (_, index) => `{"id":"e${index}","title":"Zürich – 東京 ${'é'.repeat(index % 7)}"}`)
  const text = lines.map((line, index) => (index % 3 === 0 ? `${line}\r\n` : `${line}\n`)).join('')
  // Chunk sizes that cut lines and multi-byte characters at every offset.
  for (const chunkSize of [1, 2, 3, 7, 64, 65536]) expect(await collect(readLines(file(text), { chunkSize }))).toEqual(lines)
})

it('keeps a last line without a newline, and blank lines as they are', async () => {
  expect(await collect(readLines(file('a\n\nb'), { chunkSize: 2 }))).toEqual(['a', '', 'b'])
  expect(await collect(readLines(file(''), { chunkSize: 2 }))).toEqual([])
})

it('gives a line over maxLineBytes as its length in bytes, the lines around it whole, however the chunks cut it', async () => {
  /** A record of this many bytes in UTF-8, most of its characters two bytes each. */
  const long = (bytes: number) => {
    const rest = bytes - Buffer.byteLength('{"id":"big","title":""}')
    return `{"id":"big","title":"${'é'.repeat(Math.floor(rest / 2))}${'x'.repeat(rest % 2)}"}`
  }
  const [atLimit, overLimit] = [long(1000), long(1002)]
  const text = `a\n${overLimit}\r\nb\n${atLimit}\n${overLimit}\n\nc\n${overLimit}`
  const expected = ['a', new OverlongLine(1003), 'b', atLimit, new OverlongLine(1002), '', 'c', new OverlongLine(1002)]
  for (const chunkSize of [1, 3, 7, 64, 999, 1001, 4096]) expect(await collect(readLines(file(text), { chunkSize, maxLineBytes: 1000 }))).toEqual(expected)
  for (const size of [1, 5, 4096]) expect(await collect(readLines('-', { standardInput: inPieces(gzipSync(text), size), maxLineBytes: 1000 }))).toEqual(expected)
  // Without maxLineBytes, every line is given whole.
  expect(await collect(readLines(file(text), { chunkSize: 64 }))).toEqual(['a', overLimit, 'b', atLimit, overLimit, '', 'c', overLimit])
})

const gzipFile = (text: string) => {
  const path = join(mkdtempSync(join(tmpdir(), 'er-lines-')), 'lines.ndjson.gz')
  writeFileSync(path, gzipSync(text))
  return path
}

/** Yields the bytes in pieces of `size`, as a pipe may deliver them. */
async function* inPieces(bytes: Uint8Array, size: number) {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size)
}

it('decompresses gzip recognised by its magic bytes, from a file and from standard input, however the bytes arrive', async () => {
  const lines = Array.from({ length: 300 }, (_, index) => `{"id":"e${index}","title":"Zürich ${index}"}`)
  const text = `${lines.join('\n')}\n`
  for (const chunkSize of [1, 5, 65536]) expect(await collect(readLines(gzipFile(text), { chunkSize }))).toEqual(lines)
  // Two gzip members back to back (as `cat a.gz b.gz` makes) are one stream.
  const twoMembers = Buffer.concat([gzipSync(`${lines.slice(0, 100).join('\n')}\n`), gzipSync(lines.slice(100).join('\n'))])
  for (const size of [1, 2, 4096]) {
    expect(await collect(readLines('-', { standardInput: inPieces(twoMembers, size) }))).toEqual(lines)
    expect(await collect(readLines('-', { standardInput: inPieces(Buffer.from(text), size) }))).toEqual(lines)
  }
  // A lone byte equal to gzip's first is text, not a broken stream.
  expect(await collect(readLines('-', { standardInput: inPieces(Buffer.from([0x1f]), 1) }))).toEqual(['\u001f'])
  expect(await collect(readLines('-', { standardInput: inPieces(new Uint8Array(0), 1) }))).toEqual([])
})

it('fails a truncated gzip stream with a message that says so, after the lines before it', async () => {
  const compressed = gzipSync(Array.from({ length: 2000 }, (_, index) => `line ${index} ${'x'.repeat(index % 50)}`).join('\n'))
  const read: string[] = []
  await expect(async () => {
    for await (const line of readLines('-', { standardInput: inPieces(compressed.subarray(0, compressed.length - 100), 512) })) read.push(line)
  }).rejects.toThrow(/^gzip: unexpected end of file/)
  expect(read.length).toBeGreaterThan(1000)
  expect(read.length).toBeLessThan(2000)
})

it('streams a large gzip file: resident memory does not grow with its size', async () => {
  const directory = mkdtempSync(join(tmpdir(), 'er-lines-'))
  const path = join(directory, 'large.ndjson.gz')
  const line = JSON.stringify({ id: 'e', type: 'person', title: 'x'.repeat(200) })
  const count = 800_000 // about 190 MB once decompressed
  await pipeline(
    Readable.from((function* () {
      for (let index = 0; index < count; index += 1000) yield `${line}\n`.repeat(1000)
    })()),
    createGzip({ level: 1 }),
    createWriteStream(path),
  )
  const before = process.memoryUsage().rss
  let peak = before
  let lines = 0
  for await (const _ of readLines(path)) {
    if (++lines % 10_000 === 0) peak = Math.max(peak, process.memoryUsage().rss)
  }
  expect(lines).toBe(count)
  expect(peak - before).toBeLessThan(64 * 2 ** 20)
})
