import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { glibcVersion, MALLOC_SETTINGS, RERUN_MARK, wantsMallocSettings } from '../../src/cli/malloc-settings.js'
import { CLI } from '../support/cli.js'

describe("reindex's malloc settings", () => {
  it('apply on glibc alone, and never over settings of the operator', () => {
    expect(wantsMallocSettings({}, '2.36')).toBe(true)
    expect(wantsMallocSettings({}, null)).toBe(false)
    expect(wantsMallocSettings({ MALLOC_MMAP_THRESHOLD_: '1048576' }, '2.36')).toBe(false)
    expect(wantsMallocSettings({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' }, '2.36')).toBe(false)
    expect(wantsMallocSettings({ GLIBC_TUNABLES: 'glibc.rtld.optional_static_tls=4096' }, '2.36')).toBe(true)
    expect(wantsMallocSettings({ ENTITY_REGISTRY_MALLOC_RERUN: '1' }, '2.36')).toBe(false)
  })

  describe.runIf(glibcVersion() !== null)('on this glibc machine', () => {
    const data = mkdtempSync(join(tmpdir(), 'er-malloc-'))
    // Enough entities that reindex takes seconds: a test's kill lands while it works.
    beforeAll(() => {
      const records = join(data, 'records.ndjson')
      const record = (n: number) => ({ id: `p${n}`, type: 'person', name: `Person ${n}`, title: `Member for district ${n % 400}`, jurisdiction: 'US', texts: [] })
      writeFileSync(records, Array.from({ length: 10_000 }, (_, n) => JSON.stringify(record(n))).join('\n'))
      const imported = spawn(process.execPath, [CLI, 'import', records, '--data', data])
      return new Promise((resolve) => imported.once('exit', resolve))
    }, 60_000)

    /** `reindex` started, and the child it runs in once it has started (its environment read), or null when there is none. */
    async function reindexWithChild() {
      const parent = spawn(process.execPath, [CLI, 'reindex', '--data', data, '--progress', 'none'], { env: { ...process.env, MALLOC_MMAP_THRESHOLD_: undefined } })
      let out = ''
      parent.stdout.setEncoding('utf8').on('data', (chunk: string) => void (out += chunk))
      const exited = new Promise<{ code: number | null }>((resolve) => parent.once('exit', (code) => resolve({ code })))
      const children = `/proc/${parent.pid}/task/${parent.pid}/children`
      for (let waited = 0; waited < 10_000; waited += 10) {
        const pid = existsSync(children) ? readFileSync(children, 'utf8').trim().split(' ')[0] : ''
        // Until it has run its program, a child forked holds its parent's environment.
        const environment = pid ? readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0') : []
        if (environment.some((entry) => entry.startsWith(`${RERUN_MARK}=`))) return { parent, child: Number(pid), environment, exited, out: () => out }
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      throw new Error('reindex started no child')
    }

    /** Whether a process has ended (gone, or a zombie its new parent has not reaped yet). */
    const ended = (pid: number) => !existsSync(`/proc/${pid}/stat`) || readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.startsWith('Z')
    async function endsWithin(pid: number, milliseconds: number) {
      for (let waited = 0; waited < milliseconds && !ended(pid); waited += 20) await new Promise((resolve) => setTimeout(resolve, 20))
      return ended(pid)
    }

    /** Lets the child start its work (its modules loaded, the index opened). */
    const working = () => new Promise((resolve) => setTimeout(resolve, 500))

    it('runs in a child that has them, and passes on a signal that ends it', async () => {
      const { parent, child, environment, exited, out } = await reindexWithChild()
      await working()
      for (const [name, value] of Object.entries(MALLOC_SETTINGS)) expect(environment).toContain(`${name}=${value}`)
      parent.kill('SIGTERM')
      expect(await exited).toEqual({ code: 143 })
      expect(await endsWithin(child, 2000)).toBe(true)
      expect(out()).not.toContain('reindexed:')
    })

    it('ends its child when it is killed, before the child finishes alone', async () => {
      const { parent, child, exited, out } = await reindexWithChild()
      await working()
      parent.kill('SIGKILL')
      await exited
      expect(await endsWithin(child, 1000)).toBe(true)
      expect(out()).not.toContain('reindexed:')
    })
  })
})
