#!/usr/bin/env node
// `npm run demo`: builds only when a source is newer than the build, then serves the bundled demo
// data from .data/demo with the key demo-key, and prints a link to the explorer that opens with the
// key (in the fragment, which no server sees). Delete .data/demo to start again from the demo data.
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { buildIfStale, root } from './build-if-stale.mjs'

const KEY = 'demo-key'
const built = buildIfStale()
const serve = spawn(process.execPath, [built, 'serve', '--demo', '--data', join(root, '.data', 'demo'), '--api-key', KEY, ...process.argv.slice(2)], {
  stdio: ['inherit', 'pipe', 'inherit'],
})
serve.stdout.on('data', (chunk) => {
  process.stdout.write(chunk)
  const listening = /^listening on (\S+)$/m.exec(chunk.toString())
  if (listening) process.stdout.write(`explorer: ${listening[1]}/explore#key=${KEY}\n`)
})
// Ctrl-C reaches the server itself (same process group), which shuts down gracefully; passed on once
// more it would be its second signal, which ends it at once. SIGTERM comes to this process alone.
process.on('SIGINT', () => {})
process.on('SIGTERM', () => serve.kill('SIGTERM'))
serve.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)))
