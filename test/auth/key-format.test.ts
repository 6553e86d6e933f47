import { describe, expect, it } from 'vitest'
import { generateApiKey, isWellFormedApiKey, publicIdOf } from '../../src/auth/key-format.js'

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

describe('API key format', () => {
  it('makes keys of er_, 30 random base62 characters and a 6-character checksum, each different', () => {
    const keys = Array.from({ length: 1000 }, generateApiKey)
    for (const key of keys) {
      expect(key).toMatch(/^er_[0-9A-Za-z]{36}$/)
      expect(isWellFormedApiKey(key)).toBe(true)
    }
    expect(new Set(keys).size).toBe(1000)
    expect(new Set(keys.map(publicIdOf)).size).toBe(1000)
  })

  it('tells every one-character typo from a key, wherever it is', () => {
    const key = generateApiKey()
    for (let index = 3; index < key.length; index++) {
      const other = BASE62[(BASE62.indexOf(key[index]!) + 1) % 62]!
      expect(isWellFormedApiKey(key.slice(0, index) + other + key.slice(index + 1)), `typo at ${index}`).toBe(false)
    }
    // Two characters swapped, one left out, one too many.
    expect(isWellFormedApiKey(key.slice(0, 5) + key[6] + key[5] + key.slice(7))).toBe(key[5] === key[6])
    expect(isWellFormedApiKey(key.slice(0, -1))).toBe(false)
    expect(isWellFormedApiKey(`${key}a`)).toBe(false)
  })

  it('matches the CRC32 in base62 that a secret scanner computes', () => {
    // zlib's CRC32 of the random part, as GitHub's token checksum: computed independently here.
    const key = generateApiKey()
    let crc = 0xffffffff
    for (const byte of new TextEncoder().encode(key.slice(3, 33))) {
      crc ^= byte
      for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1
    }
    let value = (crc ^ 0xffffffff) >>> 0
    let checksum = ''
    for (let index = 0; index < 6; index++, value = Math.floor(value / 62)) checksum = BASE62[value % 62] + checksum
    expect(key.slice(33)).toBe(checksum)
  })

  it('accepts keys of the format before (er_ and 43 base64url characters) and nothing else', () => {
    expect(isWellFormedApiKey(`er_${'A-_z'.repeat(10)}abc`)).toBe(true)
    for (const token of ['', 'er_', 'secret', `ER_${'a'.repeat(36)}`, `er_${'a'.repeat(42)}`, `er_${'a'.repeat(35)}+`, `xx_${generateApiKey().slice(3)}`]) {
      expect(isWellFormedApiKey(token), token).toBe(false)
    }
  })

  it('shows the first 11 characters as the public id', () => {
    const key = generateApiKey()
    expect(publicIdOf(key)).toBe(key.slice(0, 11))
  })
})
