#!/usr/bin/env node
// Keeps an exact local copy of a registry: back-fill the list, then follow the change feed from the
// head the back-fill saw first. No dependencies; Node 20+ (global fetch).
//
//   node examples/mirror-feed.mjs http://127.0.0.1:8080 demo-key [--once] [--filter 'GFFS']
//
// --once stops when the copy has caught up with the feed; without it, it polls every 2 seconds.
// The filter of the feed must also match tombstones (deletes and drains carry an empty snapshot), so
// the default `-type:""` matches every change; to mirror persons only, exclude the other types:
// `-type:committee,legislation`.
const [base, key, ...rest] = process.argv.slice(2)
if (!base || !key) {
  console.error('usage: mirror-feed.mjs BASE_URL API_KEY [--once] [--filter GFFS]')
  process.exit(2)
}
const once = rest.includes('--once')
const filter = rest.includes('--filter') ? rest[rest.indexOf('--filter') + 1] : '-type:""'

async function get(url) {
  for (;;) {
    const response = await fetch(url, { headers: { Authorization: `Bearer ${key}` } })
    if (response.status === 429) {
      await new Promise((resolve) => setTimeout(resolve, Number(response.headers.get('retry-after') ?? 1) * 1000))
      continue
    }
    if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`)
    return response
  }
}

/** id -> { type, attributes }: the copy. */
const copy = new Map()

// 1. Back-fill. The head seen on the first page is where the feed is followed from: anything that
//    changes during a long back-fill is replayed from the feed, so nothing is lost.
let head = null
for (let next = `${base}/v1/entities?page[limit]=100`; next; ) {
  const response = await get(next)
  head ??= response.headers.get('change-feed-head')
  const page = await response.json()
  for (const entity of page.data) copy.set(entity.id, { type: entity.type, attributes: entity.attributes })
  next = page.links.next
}
console.log(`back-filled ${copy.size} entities; following the feed after ${head}`)

// 2. Follow the feed. Each change carries the post-change snapshot: creates and updates replace the
//    entity, deletes (and drains) remove it, a merge removes the merged-away source.
let cursor = head
for (;;) {
  let caughtUp = false
  while (!caughtUp) {
    const query = new URLSearchParams({ filter, 'page[limit]': '100', ...(cursor ? { 'page[after]': cursor } : {}) })
    const page = await (await get(`${base}/v1/entities/changes?${query}`)).json()
    for (const change of page.data) {
      const { changeType, changedKeys, mergedInto, recordedAt, ...attributes } = change.attributes
      const { id, type } = change.relationships.entity.data
      if (changeType === 'create' || changeType === 'update') copy.set(id, { type, attributes })
      else copy.delete(id)
      console.log(`${change.id} ${changeType} ${id}${mergedInto ? ` -> ${mergedInto}` : ''} [${changedKeys.join(' ')}]`)
    }
    // meta.cursor advances even over windows with no match; links.next is absent at the head.
    cursor = page.meta.cursor ?? cursor
    caughtUp = !page.links.next
  }
  if (once) break
  await new Promise((resolve) => setTimeout(resolve, 2000))
}
console.log(`caught up at ${cursor}: ${copy.size} entities`)
