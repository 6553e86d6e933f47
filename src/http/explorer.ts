/// <reference path="../explorer/files.d.ts" />
import { EXPLORER_FILES_PATH, explorerHtml } from '../explorer/page.js'
import type { Answer } from './answer.js'

/**
 * The page may load only its own script and style, and talk only to its own origin: a value in the
 * data that slipped into the markup could run nothing and send nothing anywhere.
 */
const PAGE_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
}

/**
 * The explorer at `/` and `/explore` under the base path, and its two files: answers the paths it
 * owns (GET and HEAD; no key, the page holds no data), null at once for a path outside them (every
 * API request: no promise to await), and a promise of null for a file it does not have.
 */
export function createExplorerRoute(basePath: string): (pathname: string) => Promise<Answer | null> | null {
  const pagePaths = new Set([basePath === '' ? '/' : basePath, `${basePath}/`, `${basePath}/explore`, `${basePath}${EXPLORER_FILES_PATH}`])
  // Loaded at the first request for the page: its ~70 KB of text stay out of every other process.
  let loading: Promise<{ html: string; files: Map<string, Answer> }> | undefined
  const load = () =>
    (loading ??= import('virtual:entity-registry-explorer').then(({ EXPLORER_SCRIPT, EXPLORER_STYLESHEET }) => ({
      html: explorerHtml(basePath, EXPLORER_SCRIPT, EXPLORER_STYLESHEET),
      files: new Map(
        [EXPLORER_SCRIPT, EXPLORER_STYLESHEET].map((file) => [
          `${basePath}${EXPLORER_FILES_PATH}${file.name}`,
          // Named by their content's hash: a new version has a new name.
          { status: 200, headers: { ...PAGE_HEADERS, 'Content-Type': file.type, 'Cache-Control': 'public, max-age=31536000, immutable' }, body: file.body },
        ]),
      ),
    })))

  const filesPath = `${basePath}${EXPLORER_FILES_PATH}`
  return (pathname) => {
    if (pagePaths.has(pathname)) {
      return load().then(({ html }) => ({ status: 200, headers: { ...PAGE_HEADERS, 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-cache' }, body: html }))
    }
    if (!pathname.startsWith(filesPath)) return null
    return load().then(({ files }) => {
      const file = files.get(pathname)
      // A copy: the registry adds headers to the answer it is given.
      return file === undefined ? null : { ...file, headers: { ...file.headers } }
    })
  }
}
