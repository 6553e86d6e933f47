#!/usr/bin/env node
// `npm run demo`: builds only when a source is newer than the build, then serves the bundled demo
// data from .data/demo with the key demo-key. Delete .data/demo to start again from the demo data.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const built = join(root, 'dist', 'cli', 'main.js')

/** The newest modification time under the given paths. */
function newest(paths) {
  let time = 0
  for (const path of paths) {
    if (!existsSync(path)) continue
    const stat = statSync(path)
    time = Math.max(time, stat.isDirectory() ? newest(readdirSync(path).map((name) => join(path, name))) : stat.mtimeMs)
  }
  return time
}

const sources = ['src', 'adapters', 'package.json', 'tsup.config.ts'].map((path) => join(root, path))
if (!existsSync(built) || newest(sources) > statSync(built).mtimeMs) {
  const build = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' })
  if (build.status !== 0) process.exit(build.status ?? 1)
}
const serve = spawnSync(process.execPath, [built, 'serve', '--demo', '--data', join(root, '.data', 'demo'), '--api-key', 'demo-key', ...process.argv.slice(2)], {
  stdio: 'inherit',
})
process.exit(serve.status ?? 0)
