import { randomUUID } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { startServer, type Server } from '../support/cli.js'
import { REDIS_URL as url, redisReachable } from '../support/redis.js'

const reachable = await redisReachable()
describe.skipIf(!reachable)(`serve --redis (${reachable ? url : `skipped: no Redis at ${url}`})`, () => {
  const servers: Server[] = []
  afterAll(() => servers.forEach((server) => server.process.kill()))

  it('two instances give a key its limit once, not twice', async () => {
    const data = mkdtempSync(join(tmpdir(), 'er-redis-cli-'))
    const key = `k${randomUUID().replaceAll('-', '')}` // a fresh key is a fresh bucket
    // Search off: opening LanceDB blocks a process for up to 300 ms, past the limiter's Redis
    // timeout (which lets the request through rather than fail it).
    const args = ['--data', data, '--api-key', key, '--rate-limit', '3', '--redis', url, '--search', 'none']
    const a = await startServer(args)
    const b = await startServer(args)
    servers.push(a, b)
    const statuses = []
    for (const server of [a, b, a, b, a]) {
      const response = await fetch(`${server.url}/v1/entities?filter=type:person`, { headers: { authorization: `Bearer ${key}` } })
      statuses.push(response.status)
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429])
  })
})
