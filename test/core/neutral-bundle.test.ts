/**
 * The root entry must run where Node's built-ins do not exist (Deno without compat, Bun, edge
 * runtimes, browsers): bundled for esbuild's neutral platform, any `node:` import fails the build.
 */
import { build } from 'esbuild'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'

it('bundles the root entry for a neutral platform, with no Node built-in', async () => {
  const result = await build({
    entryPoints: [fileURLToPath(new URL('../../src/index.ts', import.meta.url))],
    bundle: true,
    write: false,
    platform: 'neutral',
    format: 'esm',
    mainFields: ['module', 'main'],
    logLevel: 'silent',
    metafile: true,
  })
  const inputs = Object.keys(result.metafile.inputs)
  expect(inputs.filter((input) => input.startsWith('node:'))).toEqual([])
  expect(result.outputFiles[0]!.text).not.toMatch(/from\s*["']node:|require\(["']node:/)
})
