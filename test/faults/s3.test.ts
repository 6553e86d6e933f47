/**
 * Object storage going away under load: s3rver (in a process of its own) killed then started again,
 * and paused then resumed, while 10 clients send every kind of request (pages, gets, facets, the
 * feed, search, downloads of renditions) to `entity-registry serve --blobs s3://…` and a mirror
 * follows the feed. Downloads answer 503 blobs_unavailable with Retry-After within 5 s, nothing else
 * fails (lists need no object storage), and all is as before once it is back.
 */
import { statSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createClient } from '../../src/client/client.js'
import { startServer, type Server } from '../support/cli.js'
import type { ListeningProcess } from '../support/processes.js'
import { environmentOf, startS3ServerProcess } from '../support/s3-server.js'
import { duringOutage, expectEveryKindAnswers, expectMirrorEqualsList, expectOutageHandled, mergeInDemo, pathsOfEveryKind, sleep } from './harness.js'

const KEY = 'fault-key'
const DEMO_RENDITIONS = fileURLToPath(new URL('../../demo/renditions/', import.meta.url))
let directory: string
let s3: ListeningProcess
let port: number
let server: Server
/** Every request kind, and downloads, interleaved. */
let paths: string[]

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'er-s3-fault-'))
  s3 = await startS3ServerProcess(join(directory, 's3'))
  port = Number(new URL(s3.url).port)
  server = await startServer(
    ['--data', join(directory, 'data'), '--blobs', 's3://registry/renditions', '--demo', '--api-key', KEY, '--rate-limit', '0'],
    environmentOf(s3.url),
  )
  await mergeInDemo(join(directory, 'data'))
  const kinds = await pathsOfEveryKind(server.url, KEY, 'a000039')
  // Search open and caught up (the renditions' texts read) before the outage.
  await expectEveryKindAnswers(server.url, KEY, kinds)
  const downloads: string[] = []
  const ids: string[] = []
  for await (const entity of createClient({ baseUrl: server.url, apiKey: KEY }).list()) {
    for (const rendition of entity.attributes.texts?.flatMap((text) => text.renditions) ?? []) {
      // Small ones: a body cut mid-way (the dependency killed while it streams) can only be ended,
      // its status already sent; what is asserted here is the answer to a download that starts.
      if (statSync(join(DEMO_RENDITIONS, rendition.filename)).size <= 64 * 1024) downloads.push(new URL(rendition.links.content).pathname)
    }
    if (ids.length < 20) ids.push(entity.id)
  }
  expect(downloads.length).toBeGreaterThan(5)
  paths = ids.flatMap((id, index) => [...Object.values(kinds), `/v1/entities/${id}`, downloads[index % downloads.length]!])
}, 60_000)

afterAll(async () => {
  await server?.stop()
  if (s3?.process.pid !== undefined) process.kill(s3.process.pid, 'SIGCONT')
  await s3?.stop()
  await rm(directory, { recursive: true, force: true })
})

/** Runs the load and the mirror around `outage`, which returns when the dependency went away and came back. */
async function underLoad(outage: () => Promise<{ awayAt: number; backAt: number }>) {
  const { outcomes, awayAt, backAt, mirror } = await duringOutage(server.url, KEY, paths, outage, { warmUpMs: 2000, settleMs: 4000 })
  expectOutageHandled(outcomes, { code: 'blobs_unavailable', awayAt, backAt, needs: (path) => path.includes('/renditions/') })
  await expectMirrorEqualsList(server.url, KEY, mirror)
}

it('answers downloads 503 while object storage is killed, and serves them again once it is back', async () => {
  await underLoad(async () => {
    const awayAt = Date.now()
    process.kill(s3.process.pid!, 'SIGKILL')
    await sleep(5000)
    s3 = await startS3ServerProcess(join(directory, 's3'), { port })
    return { awayAt, backAt: Date.now() }
  })
}, 60_000)

it('answers downloads 503 within 5 s while object storage is paused, and serves them again once resumed', async () => {
  await underLoad(async () => {
    const awayAt = Date.now()
    process.kill(s3.process.pid!, 'SIGSTOP')
    await sleep(8000)
    process.kill(s3.process.pid!, 'SIGCONT')
    return { awayAt, backAt: Date.now() }
  })
}, 60_000)
