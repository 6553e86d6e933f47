/** A redis-server of a test's own, to stop, pause and start again without disturbing the shared one. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { freePort } from './free-port.js'

/** Whether redis-server is installed; with ER_REQUIRE_REDIS=1 a missing one fails the suite instead of skipping it. */
export function redisServerInstalled(): boolean {
  const installed = spawnSync('redis-server', ['--version']).status === 0
  if (!installed && process.env.ER_REQUIRE_REDIS) throw new Error('redis-server required but not installed')
  return installed
}

export interface PrivateRedis {
  url: string
  /** Starts it (again) on its port; resolves once it accepts connections. */
  start(): Promise<void>
  /** SIGTERM; resolves once it has exited. */
  stop(): Promise<void>
  /** SIGSTOP: it keeps its connections but answers nothing, as a Redis that hangs. */
  pause(): void
  resume(): void
}

/** A redis-server on a free port, keeping nothing on disk. */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort()
  const directory = mkdtempSync(join(tmpdir(), 'er-redis-'))
  let child: ChildProcess | undefined
  const running = () => child !== undefined && child.exitCode === null && child.signalCode === null
  const redis: PrivateRedis = {
    url: `redis://127.0.0.1:${port}`,
    async start() {
      const started = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { cwd: directory, stdio: ['ignore', 'pipe', 'pipe'] })
      child = started
      const output: string[] = []
      await new Promise<void>((resolve, reject) => {
        started.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${output.join('\n')}`)))
        createInterface({ input: started.stdout! }).on('line', (line) => {
          output.push(line)
          if (line.includes('Ready to accept connections')) resolve()
        })
      })
    },
    async stop() {
      if (!running()) return
      const exited = new Promise((resolve) => child!.once('exit', resolve))
      child!.kill('SIGCONT') // a paused process would not act on SIGTERM
      child!.kill('SIGTERM')
      await exited
    },
    pause: () => void child!.kill('SIGSTOP'),
    resume: () => void child!.kill('SIGCONT'),
  }
  await redis.start()
  return redis
}

