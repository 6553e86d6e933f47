import { describe, expect, it } from 'vitest'
import { createStoredKeyHashes } from '../../src/auth/stored-key-hashes.js'
import { sleep } from '../faults/harness.js'

/** A list of hashes as a store keeps it, whose reads are counted and can be made to fail. */
function hashList() {
  const stored: string[] = []
  const reads = { started: 0 }
  let failing = false
  const listHashes = async () => {
    reads.started++
    // What is stored once the read has begun is not in it.
    const seen = [...stored]
    await sleep(50)
    if (failing) throw new Error('the store is away')
    return seen
  }
  return { stored, reads, listHashes, fail: (value: boolean) => void (failing = value) }
}

describe('stored key hashes', () => {
  it('give a caller a read begun after its call, shared with every caller until it begins', async () => {
    const { stored, reads, listHashes } = hashList()
    const hashes = createStoredKeyHashes(listHashes)
    const first = hashes.readAfterNow()
    await sleep(10)
    // The first read is under way: a hash stored now is in the next one, which these callers share.
    stored.push('a'.repeat(64))
    const [second, third] = [hashes.readAfterNow(), hashes.readAfterNow()]
    expect((await first).has('a'.repeat(64))).toBe(false)
    expect(hashes.has('a'.repeat(64))).toBe(false)
    expect(await second).toBe(await third)
    expect((await second).has('a'.repeat(64))).toBe(true)
    expect(hashes.has('a'.repeat(64))).toBe(true)
    expect(reads.started).toBe(2)
  })

  it('read at most once a second, however many callers', async () => {
    const { reads, listHashes } = hashList()
    const hashes = createStoredKeyHashes(listHashes)
    const started = performance.now()
    const waits: Promise<unknown>[] = []
    while (performance.now() - started < 2500) {
      for (let caller = 0; caller < 20; caller++) waits.push(hashes.readAfterNow())
      await sleep(20)
    }
    await Promise.all(waits)
    // Reads begin at 0, 1, 2 s, and the last at 3 s for the callers since 2 s.
    expect(reads.started).toBeGreaterThanOrEqual(3)
    expect(reads.started).toBeLessThanOrEqual(4)
  })

  it('reject the callers of a failed read, keep the hashes read before, and read again for later callers', async () => {
    const { stored, listHashes, fail } = hashList()
    const hashes = createStoredKeyHashes(listHashes)
    stored.push('a'.repeat(64))
    await hashes.readAfterNow()
    fail(true)
    await expect(hashes.readAfterNow()).rejects.toThrow('the store is away')
    expect(hashes.has('a'.repeat(64))).toBe(true)
    fail(false)
    stored.push('b'.repeat(64))
    expect((await hashes.readAfterNow()).has('b'.repeat(64))).toBe(true)
  })
})
