import { spawn, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'

const url = process.env.ER_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'
const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, commandTimeout: 500, retryStrategy: () => null })
const reachable = await probe.connect().then(() => true, () => false)
probe.disconnect()
const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url))

async function serve(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', ...args], { env: { ...process.env, ENTITY_REGISTRY_API_KEYS: '' }, stdio: ['ignore', 'pipe', 'inherit'] })
  const address = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}`)))
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const match = /^listening on (http:\/\/\S+)$/.exec(line)
      if (match) resolve(match[1]!)
    })
  })
  return { child, url: address }
}

describe.skipIf(!reachable)(`serve --redis (${reachable ? url : `skipped: no Redis at ${url}`})`, () => {
  const children: ChildProcess[] = []
  afterAll(() => children.forEach((child) => child.kill()))

  it('two instances give a key its limit once, not twice', async () => {
    const data = mkdtempSync(join(tmpdir(), 'er-redis-cli-'))
    const key = `k${randomUUID().replaceAll('-', '')}` // a fresh key is a fresh bucket
    const args = ['--data', data, '--api-key', key, '--rate-limit', '3', '--redis', url]
    const a = await serve(args)
    const b = await serve(args)
    children.push(a.child, b.child)
    const statuses = []
    for (const server of [a, b, a, b, a]) {
      const response = await fetch(`${server.url}/v1/entities?filter=type:person`, { headers: { authorization: `Bearer ${key}` } })
      statuses.push(response.status)
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429])
  })
})
