#!/usr/bin/env node
// `npm run demo`: builds only when a source is newer than the build, then serves the bundled demo
// data from .data/demo with the key demo-key. Delete .data/demo to start again from the demo data.
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { buildIfStale, root } from './build-if-stale.mjs'

const built = buildIfStale()
const serve = spawnSync(process.execPath, [built, 'serve', '--demo', '--data', join(root, '.data', 'demo'), '--api-key', 'demo-key', ...process.argv.slice(2)], {
  stdio: 'inherit',
})
process.exit(serve.status ?? 0)
