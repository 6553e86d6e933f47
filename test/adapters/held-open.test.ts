/**
 * Requests of the live change feed outlive the Node adapter's send timeout: a long-poll waits longer
 * than it, and an event stream stays open between heartbeats longer than it (the registry asks the
 * adapter to hold them open). node:http's `requestTimeout` bounds only the receipt of a request.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'
import { serve, type RunningServer } from '../../adapters/node.js'
import { createApiKeyAuthenticator } from '../../src/auth/api-keys.js'
import { createMemoryStore } from '../../src/memory/memory-store.js'
import type { RegistryStore } from '../../src/ports/store.js'
import { createRegistry } from '../../src/registry.js'
import { readEvents, takeEvents } from '../live-feed/support.js'

const KEY = 'held-open-key'
const PERSONS = '/v1/entities/changes?filter=type:person'
let running: RunningServer
let store: RegistryStore
let head: string
beforeAll(async () => {
  store = createMemoryStore()
  await store.warehouse.upsert({ id: 'p1', type: 'person', name: 'p1' })
  head = (await store.feedHead())!
  running = await serve(createRegistry({ store, auth: createApiKeyAuthenticator({ keys: [KEY] }) }), { port: 0, sendTimeoutMs: 300 })
})
afterAll(() => running?.close())

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${running.url}${path}`, { headers: { Authorization: `Bearer ${KEY}`, ...headers } })

it('a long-poll waits past the send timeout and answers its page', async () => {
  const started = performance.now()
  const response = await get(`${PERSONS}&page[after]=${head}&waitSeconds=1`)
  const document = (await response.json()) as { data: unknown[]; meta: { cursor: string } }
  expect([response.status, document.data, document.meta.cursor]).toEqual([200, [], head])
  expect(performance.now() - started).toBeGreaterThan(900)
})

it('an event stream stays open past the send timeout, and delivers what commits then', async () => {
  const response = await get(`${PERSONS}&page[after]=${head}`, { Accept: 'text/event-stream' })
  const events = readEvents(response.body!)[Symbol.asyncIterator]()
  await new Promise((resolve) => setTimeout(resolve, 1000))
  await store.warehouse.upsert({ id: 'p2', type: 'person', name: 'p2' })
  const [event] = await takeEvents(events, 1)
  expect(JSON.parse(event!.data).relationships.entity.data.id).toBe('p2')
  await events.return?.(undefined)
})
