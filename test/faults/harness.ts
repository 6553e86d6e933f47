/**
 * What every fault test runs while it takes a dependency away: load from 10 concurrent clients, and a
 * mirror (the client's `mirror`) following the feed throughout; then what it asserts of both.
 */
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { expect } from 'vitest'
import { createClient } from '../../src/client/client.js'
import { mirror } from '../../src/client/mirror.js'
import type { EntityResource } from '../../src/client/types.js'
import { openStore } from '../../src/kysely/open-store.js'

/**
 * The kinds of request the fault suites send (issue 40): each reads its dependencies its own way
 * (a page and a filtered page through different statements, a get by a point read, a merged id's get
 * through its chain, facets through their counts, search through its index and then the store, a
 * download through the store and then the blobs), and each must answer an outage as the others do.
 */
export const REQUEST_KINDS = ['page', 'filtered page', 'get', 'get merged', 'facets', 'feed', 'search', 'download'] as const
export type RequestKind = (typeof REQUEST_KINDS)[number]

/** The demo data's rendition files (`--demo` imports them). */
const DEMO_RENDITIONS = fileURLToPath(new URL('../../demo/renditions/', import.meta.url))

/**
 * A path of every request kind over the demo data (`--demo`), found through the API: `merged`, an id
 * merged into another; the download, the smallest rendition the listing links to.
 */
export async function pathsOfEveryKind(baseUrl: string, apiKey: string, merged: string): Promise<Record<RequestKind, string>> {
  let get: string | undefined
  let download: { path: string; size: number } | undefined
  for await (const entity of createClient({ baseUrl, apiKey }).list()) {
    get ??= entity.id
    for (const rendition of entity.attributes.texts?.flatMap((text) => text.renditions) ?? []) {
      const size = statSync(join(DEMO_RENDITIONS, rendition.filename)).size
      if (size < (download?.size ?? Infinity)) download = { path: new URL(rendition.links.content).pathname, size }
    }
  }
  if (get === undefined || download === undefined) throw new Error('the demo data has no entity, or no rendition to download')
  return {
    page: '/v1/entities?page[limit]=50',
    // A qualifier no index answers: the page reads a window of candidates, then checks them.
    'filtered page': `/v1/entities?filter=${encodeURIComponent('type:person name:~adams')}&page[limit]=20`,
    get: `/v1/entities/${get}`,
    'get merged': `/v1/entities/${merged}`,
    facets: '/v1/facets?fields=type,jurisdiction',
    feed: '/v1/entities/changes?filter=type:person&page[limit]=50',
    search: '/v1/search?q=adams',
    download: download.path,
  }
}

/** Resolves after `ms`. */
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** One request of the load, as its client saw it. */
export interface Outcome {
  path: string
  /** When it was sent and when it was answered (ms, `Date.now()`). */
  sentAt: number
  answeredAt: number
  /** 0: no answer (connection refused or reset, or no answer within 10 s). */
  status: number
  /** The JSON:API error code of an error answer. */
  code: string | null
  retryAfter: string | null
  /** The `RateLimit` header: absent where the limiter let the request through uncounted. */
  rateLimit: string | null
}

export interface Load {
  /** Everything answered so far. */
  readonly outcomes: Outcome[]
  /** Stops the clients once their requests in flight are answered. */
  stop(): Promise<Outcome[]>
}

/** No request may wait longer than this for its answer (the bound is 5 s). */
const NO_ANSWER_AFTER_MS = 10_000

/** `concurrency` clients, each sending the next of `paths` (round robin) as soon as the last is answered. */
export function startLoad(baseUrl: string, apiKey: string, paths: string[], { concurrency = 10, pauseMs = 5 } = {}): Load {
  const outcomes: Outcome[] = []
  let stopped = false
  let next = 0
  const client = async () => {
    while (!stopped) {
      const path = paths[next++ % paths.length]!
      const sentAt = Date.now()
      let status = 0
      let code: string | null = null
      let retryAfter: string | null = null
      let rateLimit: string | null = null
      try {
        const response = await fetch(`${baseUrl}${path}`, { headers: { Authorization: `Bearer ${apiKey}` }, signal: AbortSignal.timeout(NO_ANSWER_AFTER_MS) })
        const body = await response.arrayBuffer()
        status = response.status
        retryAfter = response.headers.get('Retry-After')
        rateLimit = response.headers.get('RateLimit')
        if (status >= 400) code = (JSON.parse(new TextDecoder().decode(body)) as { errors: { code: string }[] }).errors[0]!.code
      } catch {
        status = 0
      }
      outcomes.push({ path, sentAt, answeredAt: Date.now(), status, code, retryAfter, rateLimit })
      await new Promise((resolve) => setTimeout(resolve, pauseMs))
    }
  }
  const clients = Array.from({ length: concurrency }, client)
  return {
    outcomes,
    async stop() {
      stopped = true
      await Promise.all(clients)
      return outcomes
    },
  }
}

export interface RunningMirror {
  /** The copy: id to entity. */
  readonly copy: Map<string, EntityResource>
  /** Lets the mirror catch up with the feed, then stops it. */
  stop(): Promise<void>
}

/** A mirror of every entity, polling the feed every 200 ms and retrying through outages. */
export function startMirror(baseUrl: string, apiKey: string): RunningMirror {
  const copy = new Map<string, EntityResource>()
  const controller = new AbortController()
  const client = createClient({ baseUrl, apiKey, retry: { retries: 1000, baseDelayMs: 50, maxDelayMs: 500 } })
  const following = mirror(client, {
    onUpsert: (entity) => void copy.set(entity.id, entity),
    onRemove: (id) => void copy.delete(id),
    pollIntervalMs: 200,
    signal: controller.signal,
  }).catch((error: unknown) => {
    if (!controller.signal.aborted) throw error
  })
  return {
    copy,
    async stop() {
      // Two poll intervals: whatever the feed had by now has been applied.
      await sleep(600)
      controller.abort()
      await following
    },
  }
}

/** The mirror holds exactly the list: nothing lost, nothing duplicated, nothing stale. */
export async function expectMirrorEqualsList(baseUrl: string, apiKey: string, running: RunningMirror): Promise<void> {
  await running.stop()
  const listed = new Map<string, EntityResource>()
  for await (const entity of createClient({ baseUrl, apiKey }).list()) {
    expect(listed.has(entity.id), `listed twice: ${entity.id}`).toBe(false)
    listed.set(entity.id, entity)
  }
  expect(listed.size).toBeGreaterThan(0)
  expect([...running.copy.keys()].sort()).toEqual([...listed.keys()].sort())
  for (const [id, entity] of listed) expect(running.copy.get(id)?.attributes, id).toEqual(entity.attributes)
}

/** When the dependency went away and when it was back (ms, `Date.now()`). */
export interface OutageTimes {
  awayAt: number
  backAt: number
}

/**
 * The load and a mirror around `outage`: the load runs `warmUpMs` before it and `settleMs` after it
 * (long enough past the return for the recovery bound, 2 s, to be checked), then stops; the mirror
 * goes on, for the caller to compare with `expectMirrorEqualsList` once its own writers have stopped.
 */
export async function duringOutage(
  baseUrl: string,
  apiKey: string,
  paths: string[],
  outage: () => Promise<OutageTimes>,
  { warmUpMs = 1000, settleMs = 3000 } = {},
): Promise<OutageTimes & { outcomes: Outcome[]; mirror: RunningMirror }> {
  const mirror = startMirror(baseUrl, apiKey)
  const load = startLoad(baseUrl, apiKey, paths)
  await sleep(warmUpMs)
  const times = await outage()
  await sleep(settleMs)
  return { outcomes: await load.stop(), mirror, ...times }
}

export interface OutageExpectations extends OutageTimes {
  /**
   * The code answered for the paths that need the dependency while it is away (`store_unavailable`);
   * null where no request may fail at all (a rate limiter that fails open).
   */
  code: string | null
  /** Whether a path needs the dependency (and may answer 503 while it is away); default every path. */
  needs?: (path: string) => boolean
}

/**
 * What the load saw: every request answered (the process alive), none after more than 5 s, no 500
 * (search's included: a dependency it finds away is a 503 too), every 503 with the dependency's code and a `Retry-After`, only paths that need the
 * dependency failing, and every request sent 2 s after its return answered as before the outage.
 */
export function expectOutageHandled(outcomes: Outcome[], { code, awayAt, backAt, needs = () => true }: OutageExpectations): void {
  expect(outcomes.length).toBeGreaterThan(0)
  const describe = (outcome: Outcome) => `${outcome.path} at +${outcome.sentAt - awayAt} ms: ${outcome.status} ${outcome.code ?? ''}`
  for (const outcome of outcomes) {
    expect(outcome.status, `unanswered: ${describe(outcome)}`).not.toBe(0)
    expect(outcome.answeredAt - outcome.sentAt, `slow: ${describe(outcome)}`).toBeLessThanOrEqual(5000)
    expect(outcome.status, describe(outcome)).not.toBe(500)
    // A path the load sends must be answered, not refused (a 400 would hide the path's failure).
    expect(outcome.status < 400 || outcome.status >= 500, `refused: ${describe(outcome)}`).toBe(true)
    if (outcome.status === 503) {
      expect(outcome.code, describe(outcome)).toBe(code)
      expect(outcome.retryAfter, describe(outcome)).toMatch(/^\d+$/)
      expect(needs(outcome.path), `failed without needing the dependency: ${describe(outcome)}`).toBe(true)
    }
    if (outcome.sentAt >= backAt + 2000 || outcome.answeredAt < awayAt) expect(outcome.status, `not recovered: ${describe(outcome)}`).toBeLessThan(500)
  }
  if (code === null) {
    expect(outcomes.filter((outcome) => outcome.status >= 500).map(describe)).toEqual([])
    return
  }
  // The outage was seen: some request that needs the dependency failed while it was away.
  expect(outcomes.some((outcome) => outcome.status === 503 && outcome.sentAt >= awayAt && outcome.sentAt <= backAt), 'no 503 seen while the dependency was away').toBe(true)
}

/** The outcomes of each kind's path, with how to describe one (`from`: the time an offset is counted from). */
function byKind(outcomes: Outcome[], kinds: Partial<Record<RequestKind, string>>, from: number) {
  return Object.entries(kinds).map(([kind, path]) => ({
    kind,
    outcomes: outcomes.filter((outcome) => outcome.path === path),
    describe: (outcome: Outcome) => `${kind} (${path}) sent at +${outcome.sentAt - from} ms: ${outcome.status} ${outcome.code ?? ''} Retry-After ${outcome.retryAfter}`,
  }))
}

/**
 * Every kind of request (`pathsOfEveryKind`) answered 503 with the dependency's `code` and a
 * `Retry-After` whenever it was sent and answered between `from` and `to` (while the dependency was
 * surely away), and each was sent then at least once.
 */
export function expectEveryKindUnavailable(outcomes: Outcome[], kinds: Partial<Record<RequestKind, string>>, { code, from, to }: { code: string; from: number; to: number }): void {
  for (const { kind, outcomes: ofKind, describe } of byKind(outcomes, kinds, from)) {
    const away = ofKind.filter((outcome) => outcome.sentAt >= from && outcome.answeredAt <= to)
    expect(away.length, `${kind} not sent while the dependency was away`).toBeGreaterThan(0)
    for (const outcome of away) {
      expect([outcome.status, outcome.code], describe(outcome)).toEqual([503, code])
      expect(outcome.retryAfter, describe(outcome)).toMatch(/^[1-9]\d*$/)
    }
  }
}

/** Every kind of request answered 200 whenever it was sent `withinMs` or more after the dependency's return, and each was sent then. */
export function expectEveryKindBack(outcomes: Outcome[], kinds: Partial<Record<RequestKind, string>>, { backAt, withinMs }: { backAt: number; withinMs: number }): void {
  for (const { kind, outcomes: ofKind, describe } of byKind(outcomes, kinds, backAt)) {
    const back = ofKind.filter((outcome) => outcome.sentAt >= backAt + withinMs)
    expect(back.length, `${kind} not sent ${withinMs} ms after the dependency's return`).toBeGreaterThan(0)
    for (const outcome of back) expect(outcome.status, `not back: ${describe(outcome)}`).toBe(200)
  }
}

/** Merges the demo's a000039 into a000041 in the SQLite store of a data directory (`serve` may be serving it). */
export async function mergeInDemo(dataDirectory: string): Promise<void> {
  const store = await openStore(join(dataDirectory, 'registry.sqlite'))
  try {
    await store.warehouse.apply([{ op: 'merge', id: 'a000039', into: 'a000041' }])
  } finally {
    await store.close()
  }
}

/** Every request kind answers 200 (and the merged entity as the one it went into): what a load then runs is what it means to. */
export async function expectEveryKindAnswers(baseUrl: string, apiKey: string, kinds: Partial<Record<RequestKind, string>>): Promise<void> {
  for (const [kind, path] of Object.entries(kinds)) {
    const response = await fetch(`${baseUrl}${path}`, { headers: { Authorization: `Bearer ${apiKey}` } })
    expect(response.status, kind).toBe(200)
    if (kind === 'download') continue
    const body = (await response.json()) as { data: unknown }
    if (kind === 'get merged') expect((body.data as { id: string }).id).toBe('a000041')
  }
}
