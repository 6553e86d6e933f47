/**
 * A 200 MB rendition through S3: `import` streams it up and `serve` streams it down, each process's
 * peak memory within 30 MB of the same command moving a 50 MB one: what a transfer costs does not
 * grow with its size. (Against a 1 MB transfer the peak is 40 to 65 MB higher, once: V8 collects
 * the chunks' buffers only after some 64 MB of them, whatever the size, and an S3 upload holds a
 * multipart part of 8 MB.)
 */
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { closeSync, mkdtempSync, openSync, writeFileSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { CLI } from '../support/cli.js'
import { startListening } from '../support/processes.js'
import { startS3Server, type S3Server } from '../support/s3-server.js'

const MAX_RSS = fileURLToPath(new URL('../support/max-rss.cjs', import.meta.url))
const MB = 1024 * 1024
let s3: S3Server

beforeAll(async () => {
  s3 = await startS3Server()
})
afterAll(() => s3?.close())

/** A directory with one record whose rendition is a file of `size` bytes; the file's sha256. */
function recordWithRendition(size: number): { file: string; sha256: string } {
  const directory = mkdtempSync(join(tmpdir(), 'er-large-'))
  const hash = createHash('sha256')
  const descriptor = openSync(join(directory, 'big.html'), 'w')
  const chunk = Buffer.alloc(MB, '<p>a large rendition</p>\n')
  for (let written = 0; written < size; written += MB) {
    const part = chunk.subarray(0, Math.min(MB, size - written))
    writeSync(descriptor, part)
    hash.update(part)
  }
  closeSync(descriptor)
  const renditions = [{ conversion: 'original', language: 'en', mime: 'text/html', filename: 'big.html', file: 'big.html' }]
  const record = { id: 'big1', type: 'legislation', title: 'A large bill', texts: [{ type: 'information', mime: 'text/html', renditions }] }
  writeFileSync(join(directory, 'records.ndjson'), `${JSON.stringify(record)}\n`)
  return { file: join(directory, 'records.ndjson'), sha256: hash.digest('hex') }
}

/** Peak memory of a CLI run to its end. */
function peakOfRun(args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--require', MAX_RSS, CLI, ...args], { env: { ...process.env, ...s3.environment }, stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.once('exit', (code) => {
      const peak = /max-rss (\d+)/.exec(stderr)
      if (code !== 0 || peak === null) reject(new Error(`exit ${code}: ${stderr}`))
      else resolve(Number(peak[1]))
    })
  })
}

/** Imports `size` bytes, then downloads them through `serve`: both processes' peaks, and what came back. */
async function roundTrip(size: number) {
  const { file, sha256 } = recordWithRendition(size)
  const shared = ['--database', join(mkdtempSync(join(tmpdir(), 'er-large-db-')), 'registry.sqlite'), '--blobs', `s3://${s3.bucket}/large-${size}`]
  const importPeak = await peakOfRun(['import', file, '--data', mkdtempSync(join(tmpdir(), 'er-large-data-')), ...shared])
  const server = await startListening(
    process.execPath,
    ['--require', MAX_RSS, CLI, 'serve', '--port', '0', '--data', mkdtempSync(join(tmpdir(), 'er-large-data-')), '--api-key', 'k', '--search', 'none', ...shared],
    { env: s3.environment },
  )
  const headers = { Authorization: 'Bearer k' }
  const entity = (await (await fetch(`${server.url}/v1/entities/big1`, { headers })).json()) as { data: { attributes: { texts: { renditions: { links: { content: string } }[] }[] } } }
  const response = await fetch(entity.data.attributes.texts[0]!.renditions[0]!.links.content, { headers })
  const hash = createHash('sha256')
  let received = 0
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    hash.update(chunk)
    received += chunk.byteLength
  }
  let stderr = ''
  server.process.stderr!.on('data', (chunk) => (stderr += chunk))
  await server.stop()
  const servePeak = Number(/max-rss (\d+)/.exec(stderr)?.[1] ?? Number.NaN)
  return { importPeak, servePeak, sha256, received: { size: received, sha256: hash.digest('hex'), status: response.status } }
}

it('imports and serves 200 MB in no more memory than 50 MB, within 30 MB', async () => {
  const small = await roundTrip(50 * MB)
  const large = await roundTrip(200 * MB)
  expect(large.received).toEqual({ size: 200 * MB, sha256: large.sha256, status: 200 })
  expect(large.importPeak - small.importPeak).toBeLessThan(30 * MB)
  expect(large.servePeak - small.servePeak).toBeLessThan(30 * MB)
}, 240_000)
