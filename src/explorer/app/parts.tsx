import type { ComponentChildren } from 'preact'
import { useRef, useState } from 'preact/hooks'
import type { EntityResource } from '../../client/types.js'
import { errorText, Link, type Loaded } from './context.js'

/** Entities or changes a page: a screenful. */
export const LIST_PAGE_SIZE = 25

export const FILTER_HINT = (
  <>
    Qualifiers, ANDed: <code>type:person</code>, <code>jurisdiction:US-WA,US-OR</code>, <code>title:~health</code>, <code>displayDate:&gt;=2010</code>,{' '}
    <code>-status:former</code>.
  </>
)

/** The address behind a view, to copy as it is or as a curl command (with the key left as $KEY). */
export function ApiRequest({ label, address }: { label: string; address: string }) {
  const code = useRef<HTMLElement>(null)
  const [told, setTold] = useState('')
  const copy = async (text: string, what: string) => {
    try {
      await navigator.clipboard.writeText(text)
      setTold(`${what} copied`)
    } catch {
      // No clipboard outside a secure context (http on another host than localhost): select it instead.
      const range = document.createRange()
      range.selectNodeContents(code.current!)
      getSelection()?.removeAllRanges()
      getSelection()?.addRange(range)
      setTold('selected: copy it with Ctrl+C')
    }
  }
  return (
    <div class="api-request">
      <span class="api-request-label">{label}</span>
      <code ref={code}>GET {address}</code>
      <span class="api-request-actions">
        <button type="button" onClick={() => copy(address, 'URL')}>
          Copy URL
        </button>
        <button type="button" onClick={() => copy(`curl -H "Authorization: Bearer $KEY" '${address.replace(/'/g, "'\\''")}'`, 'curl command')}>
          Copy as curl
        </button>
        <span role="status">{told}</span>
      </span>
    </div>
  )
}

/** A box of one query parameter (a filter, a search) with what the API said is wrong with it beside it. */
export function QueryForm(props: { label: string; action: string; name: string; value: string; error: string | null; hint: ComponentChildren; onSubmit(value: string): void }) {
  const [value, setValue] = useState(props.value)
  const [shown, setShown] = useState(props.value)
  if (shown !== props.value) {
    // The route changed (a facet chosen, back in history): the box follows it.
    setShown(props.value)
    setValue(props.value)
  }
  const id = `${props.name}-box`
  return (
    <form
      class="query-form"
      role="search"
      onSubmit={(event) => {
        event.preventDefault()
        props.onSubmit(value.trim())
      }}
    >
      <label for={id}>{props.label}</label>
      <div class="query-row">
        <input
          id={id}
          name={props.name}
          type="text"
          value={value}
          spellcheck={false}
          autocomplete="off"
          aria-invalid={props.error !== null}
          aria-describedby={`${id}-hint${props.error === null ? '' : ` ${id}-error`}`}
          onInput={(event) => setValue(event.currentTarget.value)}
        />
        <button type="submit">{props.action}</button>
      </div>
      {props.error !== null && (
        <p id={`${id}-error`} class="query-error" role="alert">
          {props.error}
        </p>
      )}
      <p id={`${id}-hint`} class="hint">
        {props.hint}
      </p>
    </form>
  )
}

/** Loading and failure, said where screen readers hear it. */
export function LoadState({ loaded, what }: { loaded: Loaded<unknown> | null; what: string }) {
  if (loaded?.state === 'loading') return <p role="status">Loading {what}…</p>
  if (loaded?.state === 'failed') return <p class="error" role="alert">Could not load {what}: {errorText(loaded.error)}</p>
  return null
}

/** A table that scrolls sideways on a narrow screen, reachable by keyboard to do so. */
export function ScrollingTable({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-scroll" role="region" aria-label={label} tabIndex={0}>
      <table>{children}</table>
    </div>
  )
}

/** The name a person knows an entity by: a person's name, a bill's title. */
export function entityLabel(attributes: EntityResource['attributes']): string {
  return attributes.name ?? attributes.title ?? attributes.localIdentifier ?? ''
}

export function EntityTable({ label, entities, ranked = false }: { label: string; entities: EntityResource[]; ranked?: boolean }) {
  return (
    <ScrollingTable label={label}>
      <thead>
        <tr>
          {ranked && <th scope="col">Rank</th>}
          <th scope="col">Id</th>
          <th scope="col">Type</th>
          <th scope="col">Name</th>
          <th scope="col">Title</th>
          <th scope="col">Date</th>
          <th scope="col">Jurisdiction</th>
          <th scope="col">Status</th>
        </tr>
      </thead>
      <tbody>
        {entities.map((entity, index) => (
          <tr key={entity.id}>
            {ranked && <td>{index + 1}</td>}
            <td>
              <Link route={{ view: 'entity', id: entity.id }}>{entity.id}</Link>
            </td>
            <td>{entity.type}</td>
            <td>{entity.attributes.name ?? ''}</td>
            <td>{entity.attributes.title ?? ''}</td>
            <td class="nowrap">{entity.attributes.displayDate ?? ''}</td>
            <td>{entity.attributes.jurisdiction ?? ''}</td>
            <td>{entity.attributes.status ?? ''}</td>
          </tr>
        ))}
      </tbody>
    </ScrollingTable>
  )
}
