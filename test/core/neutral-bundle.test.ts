/**
 * The root entry must run where Node's built-ins do not exist (Deno without compat, Bun, edge
 * runtimes, browsers): bundled for esbuild's neutral platform, any `node:` import fails the build.
 */
import { build } from 'esbuild'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { explorerEsbuildPlugin } from '../../src/explorer/build.js'

/** The core, and the adapters for runtimes that hand over Web requests (Deno, Bun, Next.js edge, Hattip's platforms). */
const NEUTRAL_ENTRIES = ['src/index.ts', 'adapters/bun.ts', 'adapters/deno.ts', 'adapters/next.ts', 'adapters/hattip.ts']

it.each(NEUTRAL_ENTRIES)('bundles %s for a neutral platform, with no Node built-in', async (entry) => {
  const result = await build({
    entryPoints: [fileURLToPath(new URL(`../../${entry}`, import.meta.url))],
    bundle: true,
    write: false,
    platform: 'neutral',
    format: 'esm',
    mainFields: ['module', 'main'],
    logLevel: 'silent',
    metafile: true,
    plugins: [explorerEsbuildPlugin],
  })
  const inputs = Object.keys(result.metafile.inputs)
  expect(inputs.filter((input) => input.startsWith('node:'))).toEqual([])
  expect(result.outputFiles[0]!.text).not.toMatch(/from\s*["']node:|require\(["']node:/)
})
