/** The API key lives in this tab's sessionStorage only: gone when the tab closes, never in a URL sent anywhere. */
const STORAGE_KEY = 'entity-registry-explorer-key'

/**
 * The key to use: one given in the address's fragment (`#key=…`, which no server sees) is kept and
 * removed from the address bar (and so from the history and from bookmarks); else the stored one.
 */
export function takeKey(): string | null {
  const fragment = new URLSearchParams(location.hash.slice(1))
  const given = fragment.get('key')
  if (given !== null) {
    fragment.delete('key')
    const rest = fragment.toString()
    history.replaceState(history.state, '', `${location.pathname}${location.search}${rest === '' ? '' : `#${rest}`}`)
    if (given.trim() !== '') storeKey(given.trim())
  }
  return sessionStorage.getItem(STORAGE_KEY)
}

export function storeKey(key: string): void {
  sessionStorage.setItem(STORAGE_KEY, key)
}

export function forgetKey(): void {
  sessionStorage.removeItem(STORAGE_KEY)
}
