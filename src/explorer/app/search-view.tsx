import type { EntityResource } from '../../client/types.js'
import { pageOf, parameterError, useApiGet, useExplorer } from './context.js'
import { ApiRequest, EntityTable, LoadState, QueryForm } from './parts.js'

/** Hybrid search (full text and meaning, fused), ranked: up to 100 entities. */
export function SearchView({ q }: { q: string }) {
  const { api, navigate } = useExplorer()
  const address = q === '' ? null : api.address('/v1/search', { q })
  const loaded = useApiGet<EntityResource[]>(address)
  const { data: entities } = pageOf(loaded)
  return (
    <>
      <h1 tabIndex={-1}>Search</h1>
      <QueryForm
        label="Search"
        action="Search"
        name="q"
        value={q}
        error={parameterError(loaded, 'q')}
        hint={
          <>
            Words rank by text and meaning; qualifiers filter first: <code>health care type:legislation</code>, <code>farming -tax</code>.
          </>
        }
        onSubmit={(value) => navigate({ view: 'search', q: value })}
      />
      {parameterError(loaded, 'q') === null && <LoadState loaded={loaded} what="the results" />}
      {loaded?.state === 'done' && (
        <>
          <p role="status">{entities.length === 0 ? 'Nothing found.' : `${entities.length} results, best first.`}</p>
          {entities.length > 0 && <EntityTable label="Search results" entities={entities} ranked />}
        </>
      )}
      {address !== null && <ApiRequest label="This search" address={address} />}
    </>
  )
}
