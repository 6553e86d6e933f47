import { createContext, type ComponentChildren } from 'preact'
import { useContext, useEffect, useState } from 'preact/hooks'
import { RegistryError } from '../../client/errors.js'
import type { Api, ApiAnswer } from './api.js'
import { hrefOf, type Route } from './route.js'

export interface Explorer {
  api: Api
  navigate(route: Route): void
  /** The API refused the key (401): ask for another. */
  keyRefused(): void
}

export const ExplorerContext = createContext<Explorer | null>(null)

export function useExplorer(): Explorer {
  const explorer = useContext(ExplorerContext)
  if (explorer === null) throw new Error('useExplorer outside ExplorerContext')
  return explorer
}

export type Loaded<T> = { state: 'loading' } | { state: 'done'; answer: ApiAnswer<T> } | { state: 'failed'; error: Error }

/** A collection's resources, and where the next page starts, once `loaded` is done (none before). */
export function pageOf<T>(loaded: Loaded<T[]> | null): { data: T[]; next: string | undefined; cursor: string | null } {
  if (loaded?.state !== 'done') return { data: [], next: undefined, cursor: null }
  const { document } = loaded.answer
  return { data: document.data ?? [], next: document.links?.next, cursor: document.meta?.cursor ?? null }
}

/** GETs an address (none: nothing to load) again whenever it changes; a newer address aborts the older request. */
export function useApiGet<T>(address: string | null): Loaded<T> | null {
  const { api, keyRefused } = useExplorer()
  const [loaded, setLoaded] = useState<Loaded<T> | null>(null)
  useEffect(() => {
    if (address === null) {
      setLoaded(null)
      return
    }
    const controller = new AbortController()
    setLoaded({ state: 'loading' })
    api.get<T>(address, controller.signal).then(
      (answer) => {
        // An answer that came in as a newer address replaced this one is not shown.
        if (!controller.signal.aborted) setLoaded({ state: 'done', answer })
      },
      (error: Error) => {
        if (controller.signal.aborted) return
        if (error instanceof RegistryError && error.status === 401) keyRefused()
        setLoaded({ state: 'failed', error })
      },
    )
    return () => controller.abort()
  }, [api, address])
  return loaded
}

/** What an error says to a person: the API's `detail` when it gave one. */
export function errorText(error: Error): string {
  if (error instanceof RegistryError) {
    const first = error.errors[0]
    return `${first?.detail ?? first?.title ?? 'the request failed'} (${error.status}${first?.code ? ` ${first.code}` : ''})`
  }
  return error.message
}

/** The error's message when it is about this query parameter (a bad filter), else null. */
export function parameterError(loaded: Loaded<unknown> | null, parameter: string): string | null {
  if (loaded?.state !== 'failed' || !(loaded.error instanceof RegistryError)) return null
  const about = loaded.error.errors.find((error) => error.source?.parameter === parameter)
  return about ? (about.detail ?? about.title ?? 'not accepted') : null
}

/** A link within the page: a real address (opens in a new tab too), followed without a reload. */
export function Link({ route, children, current }: { route: Route; children: ComponentChildren; current?: boolean }) {
  const { navigate } = useExplorer()
  return (
    <a
      href={hrefOf(route)}
      aria-current={current ? 'page' : undefined}
      onClick={(event) => {
        if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
        event.preventDefault()
        navigate(route)
      }}
    >
      {children}
    </a>
  )
}
