import { useState } from 'preact/hooks'
import type { EntityResource, FacetCounts } from '../../client/types.js'
import { FACET_FIELDS, type FacetField } from '../../contract/fields.js'
import { errorText, Link, pageOf, parameterError, useApiGet, useExplorer } from './context.js'
import { exportEntities, saveFile, type ExportFormat } from './export.js'
import { narrowFilter } from './gffs.js'
import { ApiRequest, EntityTable, FILTER_HINT, LIST_PAGE_SIZE, LoadState, QueryForm } from './parts.js'

const FACET_NAMES: Record<FacetField, string> = {
  type: 'Type',
  jurisdiction: 'Jurisdiction',
  localType: 'Local type',
  authority: 'Authority',
  status: 'Status',
}

/** The entity list for a filter, a page at a time, with the filter's facet counts beside it. */
export function EntitiesView({ filter, after }: { filter: string; after: string | null }) {
  const { api, navigate } = useExplorer()
  const address = api.address('/v1/entities', { filter: filter === '' ? null : filter, 'page[after]': after, 'page[limit]': String(LIST_PAGE_SIZE) })
  const loaded = useApiGet<EntityResource[]>(address)
  const { data: entities, next, cursor } = pageOf(loaded)
  return (
    <>
      <h1 tabIndex={-1}>Entities</h1>
      <QueryForm
        label="Filter"
        action="Apply"
        name="filter"
        value={filter}
        error={parameterError(loaded, 'filter')}
        hint={FILTER_HINT}
        onSubmit={(value) => navigate({ view: 'entities', filter: value, after: null })}
      />
      <div class="with-facets">
        <section aria-labelledby="list-heading" class="list">
          <h2 id="list-heading">{after === null ? 'First page' : 'A later page'}</h2>
          {parameterError(loaded, 'filter') === null && <LoadState loaded={loaded} what="the entities" />}
          {loaded?.state === 'done' && (
            <>
              <p role="status">
                {entities.length > 0
                  ? `${entities.length} entities on this page${next ? ', more follow' : ''}.`
                  : next
                    ? 'No matching entity in this stretch of the registry; the next page reads on.'
                    : 'No entity matches.'}
              </p>
              {entities.length > 0 && <EntityTable label="Entities" entities={entities} />}
              <nav class="paging" aria-label="Pages">
                {after !== null && <Link route={{ view: 'entities', filter, after: null }}>First page</Link>}
                {next !== undefined && cursor && (
                  <button type="button" onClick={() => navigate({ view: 'entities', filter, after: cursor })}>
                    Next page
                  </button>
                )}
              </nav>
            </>
          )}
          <ApiRequest label="This page" address={address} />
          <ExportButtons filter={filter} />
        </section>
        <Facets filter={filter} />
      </div>
    </>
  )
}

/** How many entities the filter matches, by value of each category field; a value narrows the filter. */
function Facets({ filter }: { filter: string }) {
  const { api, navigate } = useExplorer()
  const address = api.address('/v1/facets', { filter: filter === '' ? null : filter, fields: FACET_FIELDS.join(',') })
  const loaded = useApiGet<never>(address)
  // A bad filter is told beside the box already.
  if (parameterError(loaded, 'filter') !== null) return null
  const meta = loaded?.state === 'done' ? (loaded.answer.document.meta as FacetCounts) : null
  return (
    <aside class="facets" aria-labelledby="facets-heading">
      <h2 id="facets-heading">Facet counts</h2>
      <LoadState loaded={loaded} what="the facet counts" />
      {meta && (
        <>
          <p class="total">
            {meta.total.toLocaleString('en')} {meta.total === 1 ? 'entity matches' : 'entities match'}
          </p>
          {FACET_FIELDS.map((field) => (
            <FacetValues key={field} field={field} values={meta.facets[field] ?? []} onChoose={(value) => navigate({ view: 'entities', filter: narrowFilter(filter, field, value), after: null })} />
          ))}
        </>
      )}
      <ApiRequest label="Facet counts" address={address} />
    </aside>
  )
}

/** Values shown before "Show all": the most frequent. */
const FACET_VALUES_SHOWN = 8

function FacetValues({ field, values, onChoose }: { field: FacetField; values: { value: string; count: number }[]; onChoose(value: string): void }) {
  const [all, setAll] = useState(false)
  if (values.length === 0) return null
  const listId = `facet-${field}-values`
  return (
    <section aria-labelledby={`facet-${field}`}>
      <h3 id={`facet-${field}`}>{FACET_NAMES[field]}</h3>
      <ul id={listId}>
        {(all ? values : values.slice(0, FACET_VALUES_SHOWN)).map(({ value, count }) => (
          <li key={value}>
            <button type="button" class="facet" onClick={() => onChoose(value)}>
              <span class="facet-value">{value === '' ? '(empty)' : value}</span> <span class="count">{count.toLocaleString('en')}</span>
            </button>
          </li>
        ))}
      </ul>
      {values.length > FACET_VALUES_SHOWN && (
        <button type="button" class="more" aria-expanded={all} aria-controls={listId} onClick={() => setAll(!all)}>
          {all ? 'Show fewer' : `Show all ${values.length}`}
        </button>
      )}
    </section>
  )
}

/** Downloads every entity of the filter, as CSV or NDJSON, fetched page by page in the browser. */
function ExportButtons({ filter }: { filter: string }) {
  const { api } = useExplorer()
  const [progress, setProgress] = useState('')
  const [running, setRunning] = useState<AbortController | null>(null)
  const start = async (format: ExportFormat) => {
    const controller = new AbortController()
    setRunning(controller)
    setProgress('Exporting…')
    try {
      const blob = await exportEntities(api, filter, format, (count) => setProgress(`Exporting: ${count.toLocaleString('en')} entities so far…`), controller.signal)
      saveFile(blob, `entities.${format}`)
      setProgress('Export done.')
    } catch (error) {
      setProgress(controller.signal.aborted ? 'Export stopped.' : `Export failed: ${errorText(error as Error)}`)
    } finally {
      setRunning(null)
    }
  }
  return (
    <section class="export" aria-labelledby="export-heading">
      <h2 id="export-heading">Export this filter</h2>
      <div class="buttons">
        <button type="button" disabled={running !== null} onClick={() => start('csv')}>
          Export CSV
        </button>
        <button type="button" disabled={running !== null} onClick={() => start('ndjson')}>
          Export NDJSON
        </button>
        {running !== null && (
          <button type="button" onClick={() => running.abort()}>
            Stop export
          </button>
        )}
      </div>
      <p role="status">{progress}</p>
    </section>
  )
}
