/** What the page shows, kept in the address's query so that a view can be bookmarked, shared and gone back to. */
export type Route =
  | { view: 'entities'; filter: string; after: string | null }
  | { view: 'search'; q: string }
  | { view: 'entity'; id: string }
  | { view: 'changes'; filter: string; after: string | null }

export function routeOf(search: string): Route {
  const query = new URLSearchParams(search)
  const text = (name: string) => query.get(name) ?? ''
  switch (query.get('view')) {
    case 'search':
      return { view: 'search', q: text('q') }
    case 'entity':
      return { view: 'entity', id: text('id') }
    case 'changes':
      return { view: 'changes', filter: text('filter'), after: query.get('after') }
    default:
      return { view: 'entities', filter: text('filter'), after: query.get('after') }
  }
}

/** The page's address for a route (only its query: the page is the same document). */
export function hrefOf(route: Route): string {
  const { view, ...rest } = route
  const query = new URLSearchParams(view === 'entities' ? [] : [['view', view]])
  for (const [name, value] of Object.entries(rest)) if (value !== null && value !== '') query.set(name, value)
  const text = query.toString()
  return `${location.pathname}${text === '' ? '' : `?${text}`}`
}
