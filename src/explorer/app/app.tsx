import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { createApi } from './api.js'
import { ChangesView } from './changes-view.js'
import { ExplorerContext, Link, type Explorer } from './context.js'
import { EntitiesView } from './entities-view.js'
import { EntityView } from './entity-view.js'
import { forgetKey, storeKey, takeKey } from './key.js'
import { hrefOf, routeOf, type Route } from './route.js'
import { SearchView } from './search-view.js'

export function App({ basePath }: { basePath: string }) {
  const [key, setKey] = useState(takeKey)
  const [refused, setRefused] = useState(false)
  const [route, setRoute] = useState(() => routeOf(location.search))
  const navigated = useRef(false)

  useEffect(() => {
    const followHistory = () => {
      navigated.current = true
      setRoute(routeOf(location.search))
    }
    addEventListener('popstate', followHistory)
    return () => removeEventListener('popstate', followHistory)
  }, [])

  // After a navigation, the new view's heading takes the focus: a screen reader says where it is.
  useEffect(() => {
    if (!navigated.current) return
    document.querySelector<HTMLElement>('main h1')?.focus()
  }, [route])

  const explorer = useMemo<Explorer | null>(
    () =>
      key === null
        ? null
        : {
            api: createApi(basePath, key),
            navigate(next: Route) {
              navigated.current = true
              history.pushState(null, '', hrefOf(next))
              setRoute(next)
            },
            keyRefused: () => setRefused(true),
          },
    [key],
  )

  const acceptKey = (given: string) => {
    storeKey(given)
    setRefused(false)
    setKey(given)
  }

  return (
    <>
      <a class="skip" href="#main">
        Skip to the content
      </a>
      <header>
        <p class="brand">Registry explorer</p>
        {explorer && (
          <ExplorerContext.Provider value={explorer}>
            <nav aria-label="Views">
              <Link route={{ view: 'entities', filter: '', after: null }} current={route.view === 'entities'}>
                Entities
              </Link>
              <Link route={{ view: 'search', q: '' }} current={route.view === 'search'}>
                Search
              </Link>
              <Link route={{ view: 'changes', filter: '', after: null }} current={route.view === 'changes'}>
                Changes
              </Link>
            </nav>
          </ExplorerContext.Provider>
        )}
        {key !== null && (
          <button
            type="button"
            class="forget"
            onClick={() => {
              forgetKey()
              setKey(null)
            }}
          >
            Forget the key
          </button>
        )}
      </header>
      <main id="main">
        {explorer === null || refused ? (
          <KeyForm refused={refused} onKey={acceptKey} />
        ) : (
          <ExplorerContext.Provider value={explorer}>
            <View route={route} />
          </ExplorerContext.Provider>
        )}
      </main>
    </>
  )
}

function View({ route }: { route: Route }) {
  switch (route.view) {
    case 'entities':
      return <EntitiesView filter={route.filter} after={route.after} />
    case 'search':
      return <SearchView q={route.q} />
    case 'entity':
      return <EntityView id={route.id} />
    case 'changes':
      return <ChangesView filter={route.filter} after={route.after} />
  }
}

/** Asked once a tab: the page holds no data and shows what the API gives this key. */
function KeyForm({ refused, onKey }: { refused: boolean; onKey(key: string): void }) {
  const [value, setValue] = useState('')
  return (
    <>
      <h1 tabIndex={-1}>API key</h1>
      {refused && (
        <p class="error" role="alert">
          The API refused this key (401). Enter another.
        </p>
      )}
      <form
        class="key-form"
        onSubmit={(event) => {
          event.preventDefault()
          if (value.trim() !== '') onKey(value.trim())
        }}
      >
        <label for="key-box">API key</label>
        <div class="query-row">
          <input id="key-box" type="password" autocomplete="off" required value={value} aria-describedby="key-hint" onInput={(event) => setValue(event.currentTarget.value)} />
          <button type="submit">Use this key</button>
        </div>
        <p id="key-hint" class="hint">
          Sent as <code>Authorization: Bearer …</code> with every request this page makes, and kept in this tab only (sessionStorage) until you close it or
          forget it.
        </p>
      </form>
    </>
  )
}
