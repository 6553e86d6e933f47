import type { MirrorCheckpoint, MirrorOptions, MirrorResult } from './mirror-options.js'
import type { RegistryClient } from './registry-client.js'
import { sleep } from './retry.js'
import type { EntityChange, EntityResource } from './types.js'

/** `-type:""` is the filter that matches every entity (no entity has an empty type). */
const EVERYTHING = '-type:""'

/**
 * Back-fills the list, then follows the feed from the `Change-Feed-Head` of the back-fill's first
 * page, so nothing that changed during the back-fill is lost. The feed is read with
 * `filterScope=either`: a change is seen when the entity matched the filter before or after it, and
 * `meta.matchesFilter` says which side of the filter it ends on, so deletes, drains, merges and
 * updates that move an entity out of the subset remove it from the copy.
 */
export async function mirror(client: RegistryClient, options: MirrorOptions): Promise<MirrorResult> {
  const filter = options.filter ?? EVERYTHING
  const { signal } = options
  let state = (await options.checkpoint?.load()) ?? { filter, phase: 'backfill', after: null, head: null }
  if (state.filter !== filter) {
    throw new Error(`the checkpoint is of the filter ${JSON.stringify(state.filter)}, not ${JSON.stringify(filter)}`)
  }
  const save = async (next: MirrorCheckpoint) => {
    state = next
    await options.checkpoint?.save(next)
  }

  if (state.phase === 'backfill') {
    let head = state.head
    let first = state.after === null
    for await (const page of client.listPages({ filter, after: state.after, ...(signal ? { signal } : {}) })) {
      // The head of the first page: everything the back-fill could miss comes after it.
      if (first) head = page.feedHead
      first = false
      for (const entity of page.data) await options.onUpsert(entity)
      await save(page.next === null ? { filter, phase: 'follow', cursor: head } : { filter, phase: 'backfill', after: page.cursor, head })
    }
    if (state.phase === 'backfill') await save({ filter, phase: 'follow', cursor: head })
  }

  for (;;) {
    const cursor = state.phase === 'follow' ? state.cursor : null
    for await (const page of client.changePages({ filter, after: cursor, filterScope: 'either', ...(signal ? { signal } : {}) })) {
      for (const change of page.data) await apply(change)
      await save({ filter, phase: 'follow', cursor: page.cursor ?? cursor })
    }
    if (options.once) return { checkpoint: state }
    if (options.live) break
    await sleep(options.pollIntervalMs ?? 2000, signal)
  }

  // Caught up, live: the changes as they commit, over the feed's event stream (its positions saved as they come).
  let saving = Promise.resolve()
  const saveAt = (cursor: string) => (saving = saving.then(() => save({ filter, phase: 'follow', cursor })))
  const from = state.phase === 'follow' ? state.cursor : null
  for await (const change of client.watchChanges({ filter, filterScope: 'either', after: from, onCursor: saveAt, ...(signal ? { signal } : {}) })) {
    await apply(change)
    await saving
  }
  throw signal?.reason ?? new Error('the change feed stream ended')

  async function apply(change: EntityChange) {
    if (staysInSubset(change)) await options.onUpsert(entityOf(change))
    else await options.onRemove(change.relationships.entity.data.id)
  }
}

/** Whether the entity is in the subset after the change; a server without `filterScope` says nothing. */
function staysInSubset(change: EntityChange): boolean {
  const matches = (change as { meta?: { matchesFilter?: boolean } }).meta?.matchesFilter
  if (matches !== undefined) return matches
  return change.attributes.changeType === 'create' || change.attributes.changeType === 'update'
}

/** The entity as the change left it: the change's attributes but the change's own. */
function entityOf(change: EntityChange): EntityResource {
  const { changeType: _changeType, changedKeys: _changedKeys, mergedInto: _mergedInto, recordedAt: _recordedAt, ...attributes } =
    change.attributes
  const { type, id } = change.relationships.entity.data
  return { type, id, attributes, links: { self: change.relationships.entity.links.related } }
}
