import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import { gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { createProgress, type Progress, type ProgressReport } from '../../src/cli/progress.js'
import { CLI } from '../support/cli.js'

/** A stream that says it is a terminal (or not), keeping what is written. */
function terminal(isTTY: boolean) {
  const stream = Object.assign(new PassThrough(), { isTTY })
  const written: string[] = []
  stream.on('data', (chunk: Buffer) => written.push(chunk.toString()))
  return { stream, written }
}

/** Counts `count` items done, one at a time, as the import does for each line. */
function count(progress: Progress, count: number) {
  for (let index = 0; index < count; index++) progress.add()
}

describe('progress', () => {
  it('draws count, rate and elapsed time on a terminal, each draw replacing the last, and ends the line', async () => {
    const { stream, written } = terminal(true)
    const progress = createProgress('reindex', { unit: 'entities', stream, intervalMs: 0 })
    count(progress, 1500)
    progress.done()
    await new Promise((resolve) => setImmediate(resolve))
    expect(written).toHaveLength(1501)
    expect(written.every((draw) => draw.startsWith('\r\x1b[2Kreindex: '))).toBe(true)
    expect(written[0]).toMatch(/^\r\x1b\[2Kreindex: 1 entities, [\d,]+ entities\/s, \d+\.\d s$/)
    expect(written.at(-1)).toMatch(/^\r\x1b\[2Kreindex: 1,500 entities, [\d,]+ entities\/s, \d+\.\d s\n$/)
  })

  it('redraws at most once an interval', async () => {
    const { stream, written } = terminal(true)
    const progress = createProgress('import', { unit: 'lines', stream, intervalMs: 60_000 })
    count(progress, 10_000)
    await new Promise((resolve) => setImmediate(resolve))
    expect(written).toHaveLength(1)
  })

  it('draws nothing when the stream is not a terminal (a pipe, a log file)', async () => {
    const { stream, written } = terminal(false)
    const progress = createProgress('import', { unit: 'lines', stream, intervalMs: 0 })
    count(progress, 100)
    progress.done()
    await new Promise((resolve) => setImmediate(resolve))
    expect(written).toEqual([])
  })

  it('adds percent and time left once the size of the whole is known', async () => {
    const { stream, written } = terminal(true)
    const progress = createProgress('import', { unit: 'lines', stream, intervalMs: 0 })
    count(progress, 10)
    progress.reach(250, 1000)
    progress.reach(1000)
    progress.done()
    await new Promise((resolve) => setImmediate(resolve))
    expect(written[9]).toMatch(/^\r\x1b\[2Kimport: 10 lines, [\d,]+ lines\/s, \d+\.\d s$/)
    expect(written[10]).toMatch(/^\r\x1b\[2Kimport: 10 lines, [\d,]+ lines\/s, \d+\.\d s, 25%, \d+ s left$/)
    expect(written.at(-1)).toMatch(/^\r\x1b\[2Kimport: 10 lines, [\d,]+ lines\/s, \d+\.\d s, 100%, 0 s left\n$/)
  })

  it('writes one JSON object a line in json, terminal or not, the last one marked done; nothing with none', async () => {
    const { stream, written } = terminal(false)
    const progress = createProgress('reindex', { unit: 'changes', format: 'json', stream, intervalMs: 0 })
    progress.add(500)
    progress.reach(500, 2000)
    progress.done()
    await new Promise((resolve) => setImmediate(resolve))
    const reports = written.map((line) => JSON.parse(line) as ProgressReport)
    expect(written.every((line) => line.endsWith('\n'))).toBe(true)
    expect(reports).toEqual([
      { command: 'reindex', changes: 500, rate: expect.any(Number), seconds: expect.any(Number) },
      { command: 'reindex', changes: 500, rate: expect.any(Number), seconds: expect.any(Number), percent: 25, etaSeconds: expect.any(Number) },
      { command: 'reindex', changes: 500, rate: expect.any(Number), seconds: expect.any(Number), percent: 25, etaSeconds: expect.any(Number), done: true },
    ])
    const quiet = terminal(true)
    const none = createProgress('import', { unit: 'lines', format: 'none', stream: quiet.stream, intervalMs: 0 })
    none.add()
    none.done()
    await new Promise((resolve) => setImmediate(resolve))
    expect(quiet.written).toEqual([])
  })

  it('import --progress json: lines, and for a gzip file the compressed bytes read of its size', () => {
    const dir = mkdtempSync(join(tmpdir(), 'er-progress-'))
    const file = join(dir, 'many.ndjson.gz')
    writeFileSync(file, gzipSync(Array.from({ length: 3000 }, (_, i) => JSON.stringify({ id: `p${i}`, type: 'person', name: `Person ${i}` })).join('\n')))
    const result = spawnSync(process.execPath, [CLI, 'import', file, '--data', join(dir, 'data'), '--progress', 'json'], { encoding: 'utf8' })
    expect([result.status, result.stdout]).toEqual([0, 'applied 3000, unchanged 0, rejected 0\n'])
    const reports = result.stderr.trimEnd().split('\n').map((line) => JSON.parse(line) as ProgressReport)
    expect(reports.at(-1)).toEqual({ command: 'import', lines: 3000, rate: expect.any(Number), seconds: expect.any(Number), percent: 100, etaSeconds: 0, done: true })
  })
})
