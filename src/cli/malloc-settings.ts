import { spawn } from 'node:child_process'
import { constants } from 'node:os'

/**
 * glibc's malloc settings for `reindex`. glibc raises its mmap threshold each time a large block is
 * freed, up to 32 MB, so that later blocks come from heaps it keeps rather than from mappings it
 * gives back, and it gives each of LanceDB's threads an arena of its own: `reindex` of 1,000,000
 * entities peaked at 1.1 to 1.2 GB of RSS, the most of it in LanceDB's final `optimize`, and at
 * 0.83 GB with the threshold fixed at its default of 128 KB (bench/README.md). glibc reads them
 * when a process starts, so the command runs again in a child process that has them.
 */
export const MALLOC_SETTINGS = { MALLOC_MMAP_THRESHOLD_: '131072' } as const

/** Set in the child `rerunWithMallocSettings` starts: it ends when its parent does. */
export const RERUN_MARK = 'ENTITY_REGISTRY_MALLOC_RERUN'

/**
 * Whether this process runs on glibc without malloc settings of the operator's own (any of
 * `MALLOC_SETTINGS`, or glibc's tunables for malloc), so that `rerunWithMallocSettings` applies.
 */
export function wantsMallocSettings(environment: NodeJS.ProcessEnv = process.env, glibc = glibcVersion()): boolean {
  if (glibc === null || environment[RERUN_MARK] !== undefined) return false
  if (Object.keys(MALLOC_SETTINGS).some((name) => environment[name] !== undefined)) return false
  return !(environment.GLIBC_TUNABLES ?? '').includes('glibc.malloc.')
}

/** The glibc this process runs on, or null (another system, or musl). */
export function glibcVersion(): string | null {
  if (process.platform !== 'linux') return null
  return (process.report.getReport() as { header?: { glibcVersionRuntime?: string } }).header?.glibcVersionRuntime ?? null
}

/**
 * Runs this command line again in a child process with `MALLOC_SETTINGS`, sharing its standard
 * streams: the signals that end a command are passed on, the child ends if this process is killed
 * (`endWithParent`), and its exit code is returned (128 plus the signal's number if a signal ended it).
 */
export function rerunWithMallocSettings(): Promise<number> {
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, ...MALLOC_SETTINGS, [RERUN_MARK]: '1' },
  })
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const
  const passOn = (signal: NodeJS.Signals) => child.kill(signal)
  for (const signal of signals) process.on(signal, passOn)
  return new Promise<number>((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', (code, signal) => resolve(code ?? 128 + (signal === null ? 0 : constants.signals[signal])))
  }).finally(() => {
    for (const signal of signals) process.off(signal, passOn)
  })
}

/** In the child `rerunWithMallocSettings` started: ends when its parent's channel closes (the parent killed), rather than run on alone. */
export function endWithParent(): void {
  if (process.env[RERUN_MARK] === undefined) return
  if (!process.connected) process.exit(1)
  process.once('disconnect', () => process.exit(1))
  process.channel?.unref()
}
