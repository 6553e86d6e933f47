/** Garbage collected once a crowd of connections has gathered and once it has gone, on a real node:http server. */
import { createServer, request, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { collectAfterCrowds, exposedGarbageCollector } from '../../src/node/collect-after-crowds.js'

const QUIET_MS = 200
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('collecting after crowds', () => {
  let server: Server
  afterEach(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  })

  /** A server whose responses (and so their connections) stay open until released; `collections` counts full collections, `young` the young generation's. */
  async function holdingServer(crowd: number) {
    const held: ServerResponse[] = []
    server = createServer((_request, response) => {
      response.writeHead(200)
      response.write('held')
      held.push(response)
    })
    const counted = { collections: 0, young: 0 }
    collectAfterCrowds(server, { crowd, quietMs: QUIET_MS, youngApartMs: QUIET_MS, collect: () => counted.collections++, collectYoung: () => counted.young++ })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    const open = (count: number) =>
      Promise.all(Array.from({ length: count }, () => new Promise<void>((resolve) => request({ port, host: '127.0.0.1', agent: false }, () => resolve()).end())))
    const release = () => held.splice(0).forEach((response) => response.end())
    return { counted, open, release }
  }

  it('collects twice, a quiet while apart, once a crowd of connections has gone; never for a few', async () => {
    const { counted, open, release } = await holdingServer(16)
    await open(4)
    release()
    await sleep(QUIET_MS * 3)
    expect(counted.collections).toBe(0)

    await open(20)
    await sleep(QUIET_MS * 2)
    // Still there: nothing yet.
    expect(counted.collections).toBe(0)
    release()
    await expect.poll(() => counted.collections, { timeout: QUIET_MS * 10 }).toBe(2)
    await sleep(QUIET_MS * 3)
    expect(counted.collections).toBe(2)
  })

  it('collects the young generation twice, a quiet while apart, once a crowd has gathered and no connection has come for a while; not while they keep coming', async () => {
    const { counted, open, release } = await holdingServer(16)
    await open(4)
    await sleep(QUIET_MS * 3)
    expect(counted.young).toBe(0)

    // A crowd that keeps growing: no collection while connections keep coming.
    for (let round = 0; round < 6; round++) {
      await open(4)
      await sleep(QUIET_MS / 2)
    }
    expect(counted.young).toBe(0)
    await expect.poll(() => counted.young, { timeout: QUIET_MS * 10 }).toBe(2)
    await sleep(QUIET_MS * 3)
    expect(counted).toEqual({ young: 2, collections: 0 })
    // Another arrival into the crowd: two more once it is quiet again.
    await open(1)
    await expect.poll(() => counted.young, { timeout: QUIET_MS * 10 }).toBe(4)
    release()
    await expect.poll(() => counted.collections, { timeout: QUIET_MS * 10 }).toBe(2)
    expect(counted.young).toBe(4)
  })

  it('reaches V8\'s collector on Node without --expose-gc', () => {
    for (const generation of ['full', 'young'] as const) {
      const collect = exposedGarbageCollector(generation)
      expect(typeof collect).toBe('function')
      expect(() => collect!()).not.toThrow()
    }
  })
})
