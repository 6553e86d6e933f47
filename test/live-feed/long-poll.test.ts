import { expect, it } from 'vitest'
import { changesDocumentSchema } from '../../src/contract/schemas.js'
import { describeEachStore, storeDialects, useStore } from '../stores/each-store.js'
import { testRegistry } from '../support/demo.js'
import { createRegistry } from '../../src/registry.js'
import { expectError, readDocument } from '../support/documents.js'
import { readEvents, takeEvents } from './support.js'

const PERSONS = '/v1/entities/changes?filter=type:person'
const ids = (document: { data: { relationships: { entity: { data: { id: string } } } }[] }) => document.data.map((change) => change.relationships.entity.data.id)

describeEachStore(storeDialects, 'the live change feed', (dialect) => {
  const store = useStore(dialect)

  async function atHead() {
    const { warehouse } = store()
    await warehouse.upsert({ id: 'seed1', type: 'person', name: 'Seed' })
    const registry = testRegistry(store())
    const first = await readDocument(await registry.get(PERSONS), changesDocumentSchema)
    return { ...registry, cursor: first.meta.cursor! }
  }

  it('refuses a waitSeconds that is not a whole number from 1 to 60, naming it', async () => {
    const { get } = testRegistry(store())
    for (const value of ['0', '61', '1.5', 'x', '', '007']) {
      await expectError(await get(`${PERSONS}&waitSeconds=${value}`), 400, 'invalid_wait', 'waitSeconds')
    }
    await expectError(await get(`${PERSONS}&waitSeconds=1&waitSeconds=2`), 400, 'invalid_wait', 'waitSeconds')
  })

  it('holds a long-poll at the head until a matching change commits; one that does not match moves its cursor only', async () => {
    const { get, cursor } = await atHead()
    const started = performance.now()
    const answer = get(`${PERSONS}&page[after]=${cursor}&waitSeconds=20`)
    await new Promise((resolve) => setTimeout(resolve, 150))
    await store().warehouse.upsert({ id: 'bill1', type: 'legislation', name: 'A bill' })
    await new Promise((resolve) => setTimeout(resolve, 400))
    await store().warehouse.upsert({ id: 'ada', type: 'person', name: 'Ada' })
    const document = await readDocument(await answer, changesDocumentSchema)
    expect(ids(document)).toEqual(['ada'])
    expect(document.meta.cursor! > cursor).toBe(true)
    // Woken by the commit, not by the end of the 20 s.
    expect(performance.now() - started).toBeLessThan(10_000)
  })

  it('answers an empty page with the cursor where nothing new comes within waitSeconds', async () => {
    const { get, cursor } = await atHead()
    const started = performance.now()
    const response = await get(`${PERSONS}&page[after]=${cursor}&waitSeconds=1`)
    const elapsed = performance.now() - started
    const document = await readDocument(response, changesDocumentSchema)
    expect([document.data, document.meta.cursor]).toEqual([[], cursor])
    expect(elapsed).toBeGreaterThan(900)
    expect(response.headers.get('change-feed-head')).toBe(cursor)
  })

  it('answers at once, without waiting, when the page holds a match', async () => {
    const { get } = await atHead()
    const document = await readDocument(await get(`${PERSONS}&waitSeconds=30`), changesDocumentSchema)
    expect(ids(document)).toEqual(['seed1'])
  })

  it('streams server-sent events: the feed after Last-Event-ID, then live changes, cursors past those that do not match', async () => {
    const { warehouse } = store()
    for (const id of ['p1', 'p2', 'p3']) await warehouse.upsert({ id, type: 'person', name: id })
    const { get, registry } = testRegistry(store())
    const all = await readDocument(await get(PERSONS), changesDocumentSchema)
    const [first] = all.data
    // Last-Event-ID wins over page[after].
    const response = await get(`${PERSONS}&page[after]=${all.data[2]!.id}`, { headers: { Accept: 'text/event-stream', 'Last-Event-ID': first!.id } })
    expect([response.status, response.headers.get('content-type'), response.headers.get('access-control-allow-origin')]).toEqual([200, 'text/event-stream', '*'])
    const events = readEvents(response.body!)[Symbol.asyncIterator]()
    const caughtUp = await takeEvents(events, 2)
    expect(caughtUp.map((event) => [event.event, JSON.parse(event.data).relationships.entity.data.id, event.id])).toEqual([
      ['change', 'p2', all.data[1]!.id],
      ['change', 'p3', all.data[2]!.id],
    ])
    await warehouse.upsert({ id: 'bill1', type: 'legislation', name: 'A bill' })
    const [moved] = await takeEvents(events, 1)
    expect([moved!.event, moved!.id! > all.data[2]!.id]).toEqual(['cursor', true])
    await warehouse.upsert({ id: 'p4', type: 'person', name: 'p4' })
    const [live] = await takeEvents(events, 1)
    expect([live!.event, JSON.parse(live!.data).relationships.entity.data.id]).toEqual(['change', 'p4'])
    expect(registry.waiting().streams).toBe(1)
    // The client goes: its stream is cancelled.
    await events.return?.(undefined)
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(registry.waiting()).toEqual({ longPolls: 0, streams: 0 })
  })

  it('ends every waiting long-poll and stream at once when told to stop waiting', async () => {
    const { get, registry, cursor } = await atHead()
    const polls = [1, 2, 3].map(() => get(`${PERSONS}&page[after]=${cursor}&waitSeconds=30`))
    const stream = await get(`${PERSONS}&page[after]=${cursor}`, { headers: { Accept: 'text/event-stream' } })
    const streamed = stream.text()
    await expect.poll(() => registry.waiting()).toEqual({ longPolls: 3, streams: 1 })
    const started = performance.now()
    registry.stopWaiting()
    const answers = await Promise.all(polls)
    await streamed
    expect(performance.now() - started).toBeLessThan(1000)
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200])
  })
})

describeEachStore(storeDialects.filter((dialect) => dialect.name === 'memory'), 'waiting requests, bounded', (dialect) => {
  const store = useStore(dialect)

  it('answers 503 too_many_waiting with Retry-After past maxWaiting', async () => {
    await store().warehouse.upsert({ id: 'seed1', type: 'person', name: 'Seed' })
    const { get } = testRegistry(store(), { maxWaiting: 2 })
    const head = (await readDocument(await get(PERSONS), changesDocumentSchema)).meta.cursor!
    const waiting = [get(`${PERSONS}&page[after]=${head}&waitSeconds=5`), get(`${PERSONS}&page[after]=${head}&waitSeconds=5`)]
    await new Promise((resolve) => setTimeout(resolve, 50))
    const refused = await get(`${PERSONS}&page[after]=${head}&waitSeconds=5`)
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/)
    await expectError(refused, 503, 'too_many_waiting')
    await store().warehouse.upsert({ id: 'ada', type: 'person', name: 'Ada' })
    expect((await Promise.all(waiting)).map((answer) => answer.status)).toEqual([200, 200])
  })

  it("ends the open streams of a key that is no longer valid (revoked, expired), within seconds", async () => {
    await store().warehouse.upsert({ id: 'seed1', type: 'person', name: 'Seed' })
    let valid = true
    const registry = createRegistry({ store: store(), auth: { authenticate: () => (valid ? { id: 'k1' } : null) } })
    const stream = await registry.fetch(new Request(`http://registry.test${PERSONS}`, { headers: { Accept: 'text/event-stream' } }))
    const ended = stream.text()
    await expect.poll(() => registry.waiting().streams).toBe(1)
    const started = performance.now()
    valid = false
    await ended
    // Keys are checked every second, one check a key whatever its streams.
    expect(performance.now() - started).toBeLessThan(5000)
    expect(registry.waiting().streams).toBe(0)
  })

  it('answers HEAD of an event stream with its headers and holds no stream; a stream ended before its first read ends when read', async () => {
    await store().warehouse.upsert({ id: 'seed1', type: 'person', name: 'Seed' })
    let valid = true
    const registry = createRegistry({ store: store(), auth: { authenticate: () => (valid ? { id: 'k1' } : null) } })
    const asked = (method: string) => new Request(`http://registry.test${PERSONS}`, { method, headers: { Accept: 'text/event-stream' } })
    const head = await registry.fetch(asked('HEAD'))
    expect([head.status, head.headers.get('content-type'), head.body]).toEqual([200, 'text/event-stream', null])
    expect(registry.waiting().streams).toBe(0)
    const unread = await registry.fetch(asked('GET'))
    expect(registry.waiting().streams).toBe(1)
    valid = false
    await expect.poll(() => registry.waiting().streams, { timeout: 5000 }).toBe(0)
    expect(await unread.text()).toBe('')
  })

  it('reads the feed once a wake for all the waiters of one filter, not once a waiter', async () => {
    await store().warehouse.upsert({ id: 'seed1', type: 'person', name: 'Seed' })
    const reads = { changes: 0 }
    const counted = { ...store(), listChanges: (query: Parameters<ReturnType<typeof store>['listChanges']>[0]) => (reads.changes++, store().listChanges(query)) }
    const { get } = testRegistry(counted)
    const head = (await readDocument(await get(PERSONS), changesDocumentSchema)).meta.cursor!
    const waiting = Array.from({ length: 50 }, () => get(`${PERSONS}&page[after]=${head}&waitSeconds=20`))
    await new Promise((resolve) => setTimeout(resolve, 100))
    const before = reads.changes
    await store().warehouse.upsert({ id: 'ada', type: 'person', name: 'Ada' })
    const answers = await Promise.all(waiting)
    expect(answers.every((answer) => answer.status === 200)).toBe(true)
    // Asked alike at once, their first reads were shared too; then one read for all after the commit.
    expect(before).toBeLessThanOrEqual(3)
    expect(reads.changes - before).toBe(1)
  })
  it('reads nothing for long-polls that ask again from the head a wake read, and reads once nothing watched', async () => {
    await store().warehouse.upsert({ id: 'seed1', type: 'person', name: 'Seed' })
    const reads = { changes: 0, heads: 0 }
    const counted = {
      ...store(),
      listChanges: (query: Parameters<ReturnType<typeof store>['listChanges']>[0]) => (reads.changes++, store().listChanges(query)),
      feedHead: () => (reads.heads++, store().feedHead()),
    }
    const { get } = testRegistry(counted)
    const head = (await readDocument(await get(PERSONS), changesDocumentSchema)).meta.cursor!
    const answered = get(`${PERSONS}&page[after]=${head}&waitSeconds=20`)
    // Keeps the watch up while the others come and go.
    const keeper = get(`/v1/entities/changes?filter=type:legislation&page[after]=${head}&waitSeconds=3`)
    await new Promise((resolve) => setTimeout(resolve, 100))
    await store().warehouse.upsert({ id: 'ada', type: 'person', name: 'Ada' })
    const cursor = (await readDocument(await answered, changesDocumentSchema)).meta.cursor!
    // Any wake of the store's own watch (a commit seen by another connection) comes and goes first.
    await new Promise((resolve) => setTimeout(resolve, 500))
    const before = { ...reads }
    const again: Promise<Response>[] = []
    for (let index = 0; index < 5; index++) {
      again.push(get(`${PERSONS}&page[after]=${cursor}&waitSeconds=1`))
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    for (const response of await Promise.all(again)) expect((await readDocument(response, changesDocumentSchema)).meta.cursor).toBe(cursor)
    expect(reads).toEqual(before)
    await keeper
    // Nothing watches now: a commit wakes nobody, and a long-poll from that head reads, finding it at once.
    await store().warehouse.upsert({ id: 'bob', type: 'person', name: 'Bob' })
    const started = performance.now()
    const document = await readDocument(await get(`${PERSONS}&page[after]=${cursor}&waitSeconds=20`), changesDocumentSchema)
    expect(ids(document)).toEqual(['bob'])
    expect(performance.now() - started).toBeLessThan(5000)
  })
})
