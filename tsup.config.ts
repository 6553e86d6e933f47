import { defineConfig } from 'tsup'

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'kysely/index': 'src/kysely/index.ts',
    'memory/index': 'src/memory/index.ts',
    'adapters/node': 'adapters/node.ts',
    'cli/main': 'src/cli/main.ts',
  },
  format: ['esm'],
  target: 'node20',
  dts: true,
  clean: true,
  splitting: true,
  sourcemap: true,
})
