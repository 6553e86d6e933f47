import { writeFile } from 'node:fs/promises'
import { defineConfig } from 'tsup'
import { explorerEsbuildPlugin } from './src/explorer/build.js'

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'kysely/index': 'src/kysely/index.ts',
    'memory/index': 'src/memory/index.ts',
    'node/index': 'src/node/index.ts',
    'client/index': 'src/client/index.ts',
    'testing/index': 'src/testing/index.ts',
    'lancedb/index': 'src/lancedb/index.ts',
    'postgres-search/index': 'src/postgres-search/index.ts',
    'embedders/index': 'src/embedders/index.ts',
    'redis/index': 'src/redis/index.ts',
    's3/index': 'src/s3/index.ts',
    'telemetry/index': 'src/telemetry/index.ts',
    'bun/index': 'adapters/bun.ts',
    'deno/index': 'adapters/deno.ts',
    'next/index': 'adapters/next.ts',
    'hattip/index': 'adapters/hattip.ts',
    'cli/main': 'src/cli/main.ts',
    // The text extraction worker's thread (`node/text-worker`), a script of its own.
    'text-extraction-worker': 'src/node/text-extraction-worker.ts',
  },
  format: ['esm'],
  target: 'node20',
  // `node:` imports stay as written: Bun, Deno and bundlers need the prefix to know a built-in.
  removeNodeProtocol: false,
  dts: true,
  clean: true,
  splitting: true,
  // Bundled: as 300 modules of its own Kysely took 80 ms of a cold start, in one chunk a fraction.
  noExternal: ['kysely'],
  // The explorer's page, bundled into a module of strings the registry serves (`explorer: true`).
  esbuildPlugins: [explorerEsbuildPlugin],
  sourcemap: true,
  // The OpenAPI document ships beside the code, for tools that read it without running a server.
  async onSuccess() {
    const { createOpenApiDocument } = await import('./src/http/openapi.js')
    await writeFile('dist/openapi.json', `${JSON.stringify(createOpenApiDocument('/'), null, 2)}\n`)
  },
})
