import { Fragment } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import type { EntityChange, EntityResource } from '../../client/types.js'
import type { Api, ApiAnswer } from './api.js'
import { ChangeTable } from './changes-view.js'
import { errorText, Link, useApiGet, useExplorer } from './context.js'
import { saveFile } from './export.js'
import { gffsValue } from './gffs.js'
import { ApiRequest, entityLabel, LoadState, ScrollingTable } from './parts.js'

type Text = NonNullable<EntityResource['attributes']['texts']>[number]
type Rendition = Text['renditions'][number]

/** One entity: every attribute, its texts and renditions, its recent changes. */
export function EntityView({ id }: { id: string }) {
  const { api } = useExplorer()
  const address = api.address(`/v1/entities/${encodeURIComponent(id)}`)
  const loaded = useApiGet<EntityResource>(address)
  const entity = loaded?.state === 'done' ? loaded.answer.document.data : undefined
  const { texts = [], ...attributes } = entity?.attributes ?? {}
  // A tombstone: the API answers a deleted entity with this type and no attributes.
  const deleted = entity?.type === 'entity'
  return (
    <>
      <h1 tabIndex={-1}>{entity ? entityLabel(entity.attributes) || entity.id : `Entity ${id}`}</h1>
      <LoadState loaded={loaded} what={`entity ${id}`} />
      {entity && loaded?.state === 'done' && (
        <>
          {entity.id !== id && (
            <p class="notice" role="note">
              {id} was merged into {entity.id}: the API followed the merge and answered with <code>Content-Location: {loaded.answer.headers.get('Content-Location') ?? ''}</code>.
            </p>
          )}
          {deleted && (
            <p class="notice" role="note">
              {entity.id} was deleted: the API answers its tombstone, with no attributes.
            </p>
          )}
          <dl class="attributes">
            <dt>Id</dt>
            <dd>{entity.id}</dd>
            <dt>Type</dt>
            <dd>{entity.type}</dd>
            <NamedValues values={attributes} />
          </dl>
          {texts.length > 0 && (
            <section aria-labelledby="texts-heading">
              <h2 id="texts-heading">Texts and renditions</h2>
              {texts.map((text, index) => (
                <TextRenditions key={text.textId ?? index} text={text} index={index} />
              ))}
            </section>
          )}
        </>
      )}
      <ApiRequest label="This entity" address={address} />
      {entity && !deleted && <RecentChanges entity={entity} />}
    </>
  )
}

/** Each name and its value, as text, in a definition list. */
function NamedValues({ values }: { values: object }) {
  return (
    <>
      {Object.entries(values).map(([name, value]) => (
        <Fragment key={name}>
          <dt>{name}</dt>
          <dd>{String(value)}</dd>
        </Fragment>
      ))}
    </>
  )
}

function TextRenditions({ text, index }: { text: Text; index: number }) {
  const { renditions, ...about } = text
  return (
    <section aria-labelledby={`text-${index}`} class="text">
      <h3 id={`text-${index}`}>
        Text {index + 1}
        {text.type ? `: ${text.type}` : ''}
      </h3>
      <dl class="attributes">
        <NamedValues values={about} />
      </dl>
      <ScrollingTable label={`Renditions of text ${index + 1}`}>
        <thead>
          <tr>
            <th scope="col">File</th>
            <th scope="col">Type</th>
            <th scope="col">Size</th>
            <th scope="col">Language</th>
            <th scope="col">Conversion</th>
            <th scope="col">Download</th>
          </tr>
        </thead>
        <tbody>
          {renditions.map((rendition) => (
            <tr key={rendition.renditionId}>
              <td>{rendition.filename}</td>
              <td>{rendition.mime}</td>
              <td>
                <RenditionSize rendition={rendition} />
              </td>
              <td>{rendition.language ?? ''}</td>
              <td>{rendition.conversion}</td>
              <td>
                <DownloadButton rendition={rendition} />
              </td>
            </tr>
          ))}
        </tbody>
      </ScrollingTable>
    </section>
  )
}

/** The rendition's size from a HEAD request's Content-Length: the resource does not carry it. */
function RenditionSize({ rendition }: { rendition: Rendition }) {
  const { api } = useExplorer()
  const [size, setSize] = useState('…')
  useEffect(() => {
    const controller = new AbortController()
    api.fetchBytes(rendition.links.content, { method: 'HEAD', signal: controller.signal }).then(
      (response) => controller.signal.aborted || setSize(byteSize(Number(response.headers.get('Content-Length')))),
      () => controller.signal.aborted || setSize('unknown'),
    )
    return () => controller.abort()
  }, [api, rendition.links.content])
  return <>{size}</>
}

function byteSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`
}

/** Downloads with the key (a plain link could not send it), then hands the bytes to the browser. */
function DownloadButton({ rendition }: { rendition: Rendition }) {
  const { api } = useExplorer()
  const [state, setState] = useState('')
  const download = async () => {
    setState('Downloading…')
    try {
      const response = await api.fetchBytes(rendition.links.content)
      saveFile(await response.blob(), rendition.filename)
      setState('')
    } catch (error) {
      setState(`Failed: ${errorText(error as Error)}`)
    }
  }
  return (
    <>
      <button type="button" onClick={download} aria-label={`Download ${rendition.filename}`}>
        Download
      </button>{' '}
      <span role="status">{state}</span>
    </>
  )
}

/** Requests of the feed read for an entity's changes at most: each scans a window of the feed. */
const MAX_FEED_REQUESTS = 10
const RECENT_CHANGES = 10

interface FoundChanges {
  first: string
  changes: EntityChange[]
  /** Whether the reading reached the head of the feed. */
  complete: boolean
}

/**
 * The feed has no filter on ids: ask for the changes whose snapshot, before or after
 * (`filterScope=either`), has this entity's type and identifying field, and keep the ones of its id.
 */
function entityChangesFilter(entity: EntityResource): string {
  const qualifiers = [`type:${gffsValue(entity.type)}`]
  const { localIdentifier, name, title } = entity.attributes
  if (localIdentifier !== undefined) qualifiers.push(`localIdentifier:${gffsValue(localIdentifier)}`)
  else if (name !== undefined) qualifiers.push(`name:${gffsValue(name)}`)
  else if (title !== undefined) qualifiers.push(`title:${gffsValue(title)}`)
  return qualifiers.join(' ')
}

async function findChanges(api: Api, entity: EntityResource, signal: AbortSignal): Promise<FoundChanges> {
  const first = api.address('/v1/entities/changes', { filter: entityChangesFilter(entity), filterScope: 'either', 'page[limit]': '100' })
  const changes: EntityChange[] = []
  let address: string | null = first
  for (let requests = 0; address !== null && requests < MAX_FEED_REQUESTS; requests++) {
    const page: ApiAnswer<EntityChange[]> = await api.get<EntityChange[]>(address, signal)
    changes.push(...(page.document.data ?? []).filter((change) => change.relationships.entity.data.id === entity.id))
    address = page.document.links?.next ?? null
  }
  return { first, changes: changes.slice(-RECENT_CHANGES).reverse(), complete: address === null }
}

function RecentChanges({ entity }: { entity: EntityResource }) {
  const { api } = useExplorer()
  const [found, setFound] = useState<FoundChanges | Error | null>(null)
  useEffect(() => {
    const controller = new AbortController()
    setFound(null)
    // Whatever comes in after another entity was opened is not shown.
    const unlessAborted = (outcome: FoundChanges | Error) => controller.signal.aborted || setFound(outcome)
    findChanges(api, entity, controller.signal).then(unlessAborted, unlessAborted)
    return () => controller.abort()
  }, [api, entity.id])
  return (
    <section aria-labelledby="changes-heading">
      <h2 id="changes-heading">Recent changes</h2>
      {found === null && <p role="status">Reading the change feed…</p>}
      {found instanceof Error && (
        <p class="error" role="alert">
          Could not read the change feed: {errorText(found)}
        </p>
      )}
      {found !== null && !(found instanceof Error) && (
        <>
          <p role="status">
            {found.changes.length === 0 ? 'No change of this entity found' : `The ${found.changes.length === 1 ? 'change' : `${found.changes.length} latest changes`}, newest first`}
            {found.complete ? '.' : ` in the first ${MAX_FEED_REQUESTS} pages of the feed read for it.`} The feed has no filter on ids: the page asks for the changes
            of this entity's type and identifier and keeps those of its id.{' '}
            <Link route={{ view: 'changes', filter: entityChangesFilter(entity), after: null }}>All changes of this filter</Link>
          </p>
          {found.changes.length > 0 && <ChangeTable label="Recent changes of this entity" changes={found.changes} />}
          <ApiRequest label="Its changes" address={found.first} />
        </>
      )}
    </section>
  )
}
