import { useEffect, useState } from 'preact/hooks'
import { readServerSentEvents } from '../../client/server-sent-events.js'
import type { EntityChange } from '../../client/types.js'
import type { Api } from './api.js'
import { Link, pageOf, parameterError, useApiGet, useExplorer } from './context.js'
import { ApiRequest, entityLabel, FILTER_HINT, LIST_PAGE_SIZE, LoadState, QueryForm, ScrollingTable } from './parts.js'

/** The feed needs a filter: this one matches every change (deletes have an empty snapshot). */
const EVERY_CHANGE = '-type:""'

/** The change feed for a filter, oldest first, a window at a time. */
export function ChangesView({ filter, after }: { filter: string; after: string | null }) {
  const { api, navigate } = useExplorer()
  const address = api.address('/v1/entities/changes', { filter: filter === '' ? EVERY_CHANGE : filter, 'page[after]': after, 'page[limit]': String(LIST_PAGE_SIZE) })
  const loaded = useApiGet<EntityChange[]>(address)
  const { data: changes, next, cursor } = pageOf(loaded)
  // At the head of the feed, the changes that commit from now on are added as they come.
  const atHead = loaded?.state === 'done' && next === undefined
  const live = useLiveChanges(api, atHead ? api.address('/v1/entities/changes', { filter: filter === '' ? EVERY_CHANGE : filter }) : null, cursor)
  return (
    <>
      <h1 tabIndex={-1}>Changes</h1>
      <QueryForm
        label="Filter"
        action="Apply"
        name="filter"
        value={filter}
        error={parameterError(loaded, 'filter')}
        hint={<>Changes whose snapshot after the change matches; empty: every change. {FILTER_HINT}</>}
        onSubmit={(value) => navigate({ view: 'changes', filter: value, after: null })}
      />
      {parameterError(loaded, 'filter') === null && <LoadState loaded={loaded} what="the changes" />}
      {loaded?.state === 'done' && (
        <>
          <p role="status">
            {changes.length === 0
              ? next
                ? 'No matching change in this stretch of the feed; the next page reads on.'
                : 'No matching change up to the head of the feed.'
              : `${changes.length} changes, oldest first${next ? ', more follow' : ', up to the head of the feed'}.`}
          </p>
          {changes.length > 0 && <ChangeTable label="Changes" changes={changes} />}
          {atHead && (
            <p role="status" class="live">
              {live.length === 0 ? 'Following the feed: new changes appear here as they are made.' : `${live.length} new since this page opened, as they came:`}
            </p>
          )}
          {live.length > 0 && <ChangeTable label="New changes" changes={live} />}
          <nav class="paging" aria-label="Pages">
            {after !== null && <Link route={{ view: 'changes', filter, after: null }}>From the start</Link>}
            {next !== undefined && cursor && (
              <button type="button" onClick={() => navigate({ view: 'changes', filter, after: cursor })}>
                Next page
              </button>
            )}
          </nav>
        </>
      )}
      <ApiRequest label="This page" address={address} />
    </>
  )
}

/** How long after a stream ends (a server restarting) it is opened again. */
const RECONNECT_MS = 2000

/**
 * The changes that commit after `after`, from the feed's event stream at `address` (none: no stream),
 * opened again after `Last-Event-ID` whenever it ends; a new address or cursor starts afresh.
 */
function useLiveChanges(api: Api, address: string | null, after: string | null): EntityChange[] {
  const [live, setLive] = useState<EntityChange[]>([])
  useEffect(() => {
    setLive([])
    if (address === null) return
    const controller = new AbortController()
    let lastEventId = after
    const follow = async () => {
      while (!controller.signal.aborted) {
        try {
          const response = await api.stream(address, lastEventId, controller.signal)
          for await (const event of readServerSentEvents(response.body!)) {
            if (event.id) lastEventId = event.id
            if (event.event === 'change') {
              const change = JSON.parse(event.data) as EntityChange
              setLive((shown) => [...shown, change])
            }
          }
        } catch {
          // Gone (the key refused, the server away): tried again below, unless the view moved on.
        }
        await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS))
      }
    }
    void follow()
    return () => controller.abort()
  }, [address, after])
  return live
}

export function ChangeTable({ label, changes }: { label: string; changes: EntityChange[] }) {
  return (
    <ScrollingTable label={label}>
      <thead>
        <tr>
          <th scope="col">Recorded</th>
          <th scope="col">Change</th>
          <th scope="col">Entity</th>
          <th scope="col">Title or name</th>
          <th scope="col">Changed</th>
        </tr>
      </thead>
      <tbody>
        {changes.map((change) => {
          const { changeType, changedKeys, mergedInto, recordedAt } = change.attributes
          const entityId = change.relationships.entity.data.id
          return (
            <tr key={change.id}>
              <td class="nowrap">{recordedAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</td>
              <td>
                {changeType}
                {mergedInto !== null && (
                  <>
                    {' into '}
                    <Link route={{ view: 'entity', id: mergedInto }}>{mergedInto}</Link>
                  </>
                )}
              </td>
              <td>
                <Link route={{ view: 'entity', id: entityId }}>{entityId}</Link>
              </td>
              <td>{entityLabel(change.attributes)}</td>
              <td>{changedKeys.join(', ')}</td>
            </tr>
          )
        })}
      </tbody>
    </ScrollingTable>
  )
}
