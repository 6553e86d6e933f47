import { defineConfig } from 'vitest/config'
import { explorerVitePlugin } from './src/explorer/build.js'

export default defineConfig({
  // The explorer's page, bundled as `npm run build` does, for the tests that serve it from src.
  plugins: [explorerVitePlugin],
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    isolate: false,
    maxWorkers: 2,
  },
})
