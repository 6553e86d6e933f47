/** The built page, made at build time by `src/explorer/build.ts`. */
declare module 'virtual:entity-registry-explorer' {
  import type { ExplorerFile } from './page.js'

  export const EXPLORER_SCRIPT: ExplorerFile
  export const EXPLORER_STYLESHEET: ExplorerFile
}
