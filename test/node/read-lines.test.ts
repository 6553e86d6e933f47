import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import { readLines } from '../../src/node/read-lines.js'

const file = (text: string) => {
  const path = join(mkdtempSync(join(tmpdir(), 'er-lines-')), 'lines.ndjson')
  writeFileSync(path, text)
  return path
}

const collect = async (lines: AsyncIterable<string>) => {
  const all: string[] = []
  for await (const line of lines) all.push(line)
  return all
}

it('reads every line, across chunk boundaries that split a character, LF or CRLF', async () => {
  const lines = Array.from({ length: 500 }, (_, index) => `{"id":"e${index}","title":"Zürich – 東京 ${'é'.repeat(index % 7)}"}`)
  const text = lines.map((line, index) => (index % 3 === 0 ? `${line}\r\n` : `${line}\n`)).join('')
  // Chunk sizes that cut lines and multi-byte characters at every offset.
  for (const chunkSize of [1, 2, 3, 7, 64, 65536]) expect(await collect(readLines(file(text), chunkSize))).toEqual(lines)
})

it('keeps a last line without a newline, and blank lines as they are', async () => {
  expect(await collect(readLines(file('a\n\nb'), 2))).toEqual(['a', '', 'b'])
  expect(await collect(readLines(file(''), 2))).toEqual([])
})
