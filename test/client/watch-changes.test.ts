/**
 * `client.watchChanges`: the feed's changes as they commit, over server-sent events, across the end
 * of a stream (an instance shutting down): opened again with Last-Event-ID on the instance that
 * answers, after backing off on the 503 of the one that is going, with no change missed or repeated.
 */
import { expect, it } from 'vitest'
import { createApiKeyAuthenticator } from '../../src/auth/api-keys.js'
import { createClient, type EntityChange } from '../../src/client/index.js'
import { createMemoryStore } from '../../src/memory/memory-store.js'
import { serve } from '../../src/node/index.js'
import { createRegistry } from '../../src/registry.js'
import { API_KEY } from '../support/demo.js'

it('follows the feed across instances: reconnects with Last-Event-ID after a stream ends, backing off on 503', async () => {
  const store = createMemoryStore()
  for (const id of ['p1', 'p2']) await store.warehouse.upsert({ id, type: 'person', name: id })
  const registries = [0, 1].map(() => createRegistry({ store, auth: createApiKeyAuthenticator({ keys: [API_KEY] }) }))
  const servers = await Promise.all(registries.map((registry) => serve(registry, { port: 0 })))
  // A load balancer: the first instance until it has refused a request, then the second.
  const statuses: number[] = []
  let current = 0
  const lastEventIds: (string | null)[] = []
  const balanced: typeof fetch = async (input, init) => {
    const url = new URL(String(input))
    lastEventIds.push(new Headers(init?.headers).get('Last-Event-ID'))
    const response = await fetch(`${servers[current]!.url}${url.pathname}${url.search}`, init)
    statuses.push(response.status)
    if (response.status === 503) current = 1
    return response
  }
  const stop = new AbortController()
  try {
    const client = createClient({ baseUrl: 'http://registry.test', apiKey: API_KEY, fetch: balanced, retry: { baseDelayMs: 50 } })
    const seen: string[] = []
    const watching = (async () => {
      for await (const change of client.watchChanges({ filter: 'type:person', signal: stop.signal }) as AsyncIterable<EntityChange>) {
        seen.push(change.relationships.entity.data.id)
        if (seen.length === 5) return
      }
    })()
    await expect.poll(() => seen).toEqual(['p1', 'p2'])
    await store.warehouse.upsert({ id: 'p3', type: 'person', name: 'p3' })
    await expect.poll(() => seen.length).toBe(3)
    // The first instance goes: its stream ends, and it refuses new ones (503, Retry-After).
    const stopped = performance.now()
    registries[0]!.stopWaiting()
    await store.warehouse.upsert({ id: 'p4', type: 'person', name: 'p4' })
    await store.warehouse.upsert({ id: 'p5', type: 'person', name: 'p5' })
    await watching
    expect(seen).toEqual(['p1', 'p2', 'p3', 'p4', 'p5'])
    expect(statuses).toEqual([200, 503, 200])
    // The 503's Retry-After (2 s) was waited.
    expect(performance.now() - stopped).toBeGreaterThan(1900)
    // Reopened after the last change it had (p3's id): nothing missed, nothing twice.
    const p3 = (await store.listChanges({ qualifiers: [], after: null, limit: 10, window: 100 })).changes[2]!.changeId
    expect(lastEventIds).toEqual([null, p3, p3])
  } finally {
    stop.abort()
    await Promise.all(servers.map((server) => server.close()))
  }
}, 30_000)
