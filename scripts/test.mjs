#!/usr/bin/env node
// Runs every test suite and ends with one line that CI reads: "N passed, N failed, N skipped".
// Suites that need a service this machine lacks are skipped, and said so here.
import { spawnSync } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'

const postgresUrl = process.env.ER_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

async function postgresReachable() {
  const client = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 2000 })
  try {
    await client.connect()
    return true
  } catch {
    return false
  } finally {
    await client.end().catch(() => {})
  }
}

const notes = []
if (!(await postgresReachable())) {
  if (process.env.ER_REQUIRE_POSTGRES === '1') {
    console.error(`PostgreSQL is required (ER_REQUIRE_POSTGRES=1) but ${postgresUrl} does not answer`)
    process.exit(1)
  }
  notes.push(`skipped: the PostgreSQL server suites (no server at ${postgresUrl}; set ER_TEST_POSTGRES_URL to one). PGlite runs the same suites in-process.`)
}

// Vitest on the Node that runs this script (scripts/test-node-versions.mjs runs it on other lines).
const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url))
// The fault tests and the performance smoke measure time (recovery within 2 s, a ratio to a floor):
// they run after the rest, one file at a time, on a machine no other suite is loading.
const ALONE = ['test/faults/', 'test/perf/']
const given = process.argv.slice(2)
const phases = given.length > 0 ? [given] : [ALONE.map((folder) => `--exclude=${folder}**`), [...ALONE, '--no-file-parallelism']]

function firstLine(text) {
  return (text ?? '').split('\n').find((line) => line.trim() !== '')?.trim().slice(0, 300) ?? ''
}

let passed = 0
let failed = 0
let skipped = 0
let status = 0
// The names of the failed tests, printed again at the end: CI keeps only the tail of the output.
const failures = []
for (const [index, args] of phases.entries()) {
  const results = join(tmpdir(), `entity-registry-vitest-${process.pid}-${index}.json`)
  const run = spawnSync(process.execPath, [vitest, 'run', '--reporter=default', '--reporter=json', `--outputFile=${results}`, ...args], {
    stdio: 'inherit',
    env: process.env,
  })
  if (run.status !== 0) status = 1
  try {
    const report = JSON.parse(readFileSync(results, 'utf8'))
    passed += report.numPassedTests
    failed += report.numFailedTests + (report.numFailedTestSuites > 0 && report.numFailedTests === 0 ? report.numFailedTestSuites : 0)
    skipped += report.numPendingTests + report.numTodoTests
    for (const file of report.testResults) {
      const name = file.name.replace(`${process.cwd()}/`, '')
      const failedTests = file.assertionResults.filter((test) => test.status === 'failed')
      for (const test of failedTests) failures.push(`${name} > ${test.fullName}: ${firstLine(test.failureMessages[0])}`)
      if (file.status === 'failed' && failedTests.length === 0) failures.push(`${name}: ${firstLine(file.message)}`)
    }
    rmSync(results, { force: true })
  } catch {
    failed = Math.max(failed, 1)
    notes.push('the test runner wrote no report')
  }
}
for (const note of notes) console.log(note)
for (const failure of failures) console.log(`FAILED ${failure}`)
const code = status === 0 && failed === 0 ? 0 : 1
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`)
process.exit(code)
