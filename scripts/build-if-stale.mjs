#!/usr/bin/env node
// Builds the library (dist/) only when a source is newer than the build. Run by `npm run demo` and by
// each example's postinstall, which installs the library from this checkout (`file:../..`): a
// fresh clone has neither the library's own dependencies nor dist/ until then.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const root = fileURLToPath(new URL('..', import.meta.url))
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

function run(command, args) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' })
  if (result.status !== 0) process.exit(result.status ?? 1)
}

export function buildIfStale() {
  if (!existsSync(join(root, 'node_modules', '.package-lock.json'))) run('npm', ['install', '--no-audit', '--no-fund'])
  const sources = ['src', 'adapters', 'package.json', 'tsup.config.ts'].map((path) => join(root, path))
  if (!existsSync(built) || newest(sources) > statSync(built).mtimeMs) run('npm', ['run', 'build'])
  return built
}

if (process.argv[1] === fileURLToPath(import.meta.url)) buildIfStale()
