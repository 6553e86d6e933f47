import { PassThrough } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { createProgress, type Progress } from '../../src/cli/progress.js'

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
})
