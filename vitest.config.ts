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
    // Three on two cores: a CI run keeps the cores 60% busy with two (measured: 34 min of CPU in a
    // 28 min run), its suites waiting on servers, child processes and npm; the timed suites run
    // alone afterwards (scripts/test.mjs).
    maxWorkers: 3,
  },
})
