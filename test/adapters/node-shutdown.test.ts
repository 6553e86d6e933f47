import { connect } from 'node:net'
import { describe, expect, it } from 'vitest'
import { serve } from '../../adapters/node.js'

/** A handler whose answers take `delayMs`, counting the requests it has begun. */
function slowHandler(delayMs: number) {
  const state = { begun: 0 }
  return {
    state,
    handler: {
      fetch: async () => {
        state.begun++
        await new Promise((resolve) => setTimeout(resolve, delayMs))
        return new Response('done', { status: 200 })
      },
    },
  }
}

const until = async (condition: () => boolean) => {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5))
}

describe('node adapter shutdown', () => {
  it('lets requests in flight finish within the grace period, then stops; new connections are refused', async () => {
    const { state, handler } = slowHandler(400)
    const server = await serve(handler, { port: 0 })
    const inFlight = Array.from({ length: 10 }, () => fetch(server.url).then(async (response) => [response.status, await response.text()]))
    await until(() => state.begun === 10)
    const closing = server.close(5000)
    const started = performance.now()
    expect(await Promise.all(inFlight)).toEqual(Array.from({ length: 10 }, () => [200, 'done']))
    await closing
    expect(performance.now() - started).toBeLessThan(2000)
    const refused = await new Promise<string>((resolve) => {
      const socket = connect(Number(new URL(server.url).port), '127.0.0.1')
      socket.once('connect', () => resolve('connected')).once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'))
    })
    expect(refused).toBe('ECONNREFUSED')
  })

  it('closes what is still in flight when the grace period ends', async () => {
    const { state, handler } = slowHandler(60_000)
    const server = await serve(handler, { port: 0 })
    const stuck = fetch(server.url).then((response) => response.status, () => 'closed')
    await until(() => state.begun === 1)
    const started = performance.now()
    await server.close(300)
    expect(performance.now() - started).toBeLessThan(2000)
    expect(await stuck).toBe('closed')
  })
})
