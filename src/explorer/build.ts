/**
 * The explorer's build: bundles the page (Preact, its views, its CSS) with esbuild into one script
 * and one stylesheet, and turns them into the module the registry serves them from
 * (`virtual:entity-registry-explorer`). tsup builds it into dist; vitest and the neutral-bundle test
 * resolve it the same way. Build-time only: nothing in the library imports this file.
 */
import { createHash } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { build, type Plugin as EsbuildPlugin } from 'esbuild'
import type { ExplorerFile } from './page.js'

export const EXPLORER_MODULE = 'virtual:entity-registry-explorer'

const ENTRY = fileURLToPath(new URL('./app/main.tsx', import.meta.url))

export async function bundleExplorer(): Promise<{ script: ExplorerFile; stylesheet: ExplorerFile }> {
  const result = await build({
    entryPoints: [ENTRY],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    write: false,
    outdir: 'explorer',
    logLevel: 'silent',
  })
  const output = (extension: string, type: string): ExplorerFile => {
    const file = result.outputFiles.find((candidate) => candidate.path.endsWith(extension))
    if (file === undefined) throw new Error(`the explorer's bundle has no ${extension} file`)
    const hash = createHash('sha256').update(file.contents).digest('hex').slice(0, 12)
    return { name: `explorer-${hash}${extension}`, type, body: file.text }
  }
  return { script: output('.js', 'text/javascript; charset=utf-8'), stylesheet: output('.css', 'text/css; charset=utf-8') }
}

/** The source of the module that carries the built page: strings, so it loads on any runtime. */
export async function explorerModuleSource(): Promise<string> {
  const { script, stylesheet } = await bundleExplorer()
  return `export const EXPLORER_SCRIPT = ${JSON.stringify(script)}\nexport const EXPLORER_STYLESHEET = ${JSON.stringify(stylesheet)}\n`
}

/** For esbuild (tsup, the neutral-bundle test). */
export const explorerEsbuildPlugin: EsbuildPlugin = {
  name: 'entity-registry-explorer',
  setup(builder) {
    builder.onResolve({ filter: /^virtual:entity-registry-explorer$/ }, () => ({ path: EXPLORER_MODULE, namespace: 'entity-registry-explorer' }))
    builder.onLoad({ filter: /.*/, namespace: 'entity-registry-explorer' }, async () => ({ contents: await explorerModuleSource(), loader: 'js' }))
  },
}

/** For vite (vitest), which marks a virtual module's resolved id with a NUL character. */
export const explorerVitePlugin = {
  name: 'entity-registry-explorer',
  resolveId: (id: string) => (id === EXPLORER_MODULE ? `\0${EXPLORER_MODULE}` : undefined),
  load: (id: string) => (id === `\0${EXPLORER_MODULE}` ? explorerModuleSource() : undefined),
}
