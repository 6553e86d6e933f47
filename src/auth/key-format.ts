/**
 * The API key format, after GitHub's tokens: `er_`, 30 random base62 characters (178 bits), and the
 * CRC32 of those 30 in 6 base62 characters. A secret scanner can recognise a key by its prefix and
 * length, and the server can refuse a mistyped or made-up one without asking the store.
 */
import { sha256 } from '@noble/hashes/sha2.js'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js'

const PREFIX = 'er_'
const RANDOM_LENGTH = 30
const CHECKSUM_LENGTH = 6
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
const KEY_SHAPE = new RegExp(`^${PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`)
/** Keys made before the checksummed format: `er_` and 32 random bytes in base64url. They keep working. */
const LEGACY_KEY_SHAPE = /^er_[A-Za-z0-9_-]{43}$/
/** How many characters of a key are its public id: the prefix and 8 random characters (48 bits). */
const PUBLIC_ID_LENGTH = PREFIX.length + 8

/** The only form in which a key is kept or compared: SHA-256, hex. */
export async function hashApiKey(key: string): Promise<string> {
  return keyHash(key)
}

/**
 * SHA-256 in JavaScript (noble), on every runtime: about 2 us a key, where Web Crypto's digest
 * costs 35 us on Node (a thread-pool round trip), a tenth of a whole list request.
 */
export function keyHash(key: string): string {
  return bytesToHex(sha256(utf8ToBytes(key)))
}

/** A new random key in the checksummed format. */
export function generateApiKey(): string {
  const random = randomBase62(RANDOM_LENGTH)
  return PREFIX + random + checksumOf(random)
}

/**
 * True for a key in the checksummed format whose checksum is right, and for a key of the legacy
 * format; false for anything else, which no stored key can be.
 */
export function isWellFormedApiKey(token: string): boolean {
  if (KEY_SHAPE.test(token)) {
    const random = token.slice(PREFIX.length, PREFIX.length + RANDOM_LENGTH)
    return token.slice(PREFIX.length + RANDOM_LENGTH) === checksumOf(random)
  }
  return LEGACY_KEY_SHAPE.test(token)
}

/**
 * The key's public id: its first characters, which `keys list`, logs and rate limits show. Enough to
 * tell keys apart and to find one's own in a list; the 22 characters left keep 131 bits secret.
 */
export function publicIdOf(key: string): string {
  return key.slice(0, PUBLIC_ID_LENGTH)
}

function checksumOf(random: string): string {
  let value = crc32(random)
  let encoded = ''
  for (let index = 0; index < CHECKSUM_LENGTH; index++) {
    encoded = BASE62[value % 62] + encoded
    value = Math.floor(value / 62)
  }
  return encoded
}

/** Uniform base62 characters: bytes of 248 and above are drawn again, so that `% 62` has no bias. */
function randomBase62(length: number): string {
  let result = ''
  while (result.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < 248 && result.length < length) result += BASE62[byte % 62]
    }
  }
  return result
}

// CRC-32 (IEEE 802.3, the zlib one) by table: a few lines, and the same on every runtime.
const CRC_TABLE = Uint32Array.from({ length: 256 }, (_, byte) => {
  let value = byte
  for (let bit = 0; bit < 8; bit++) value = value & 1 ? 0xedb88320 ^ (value >>> 1) : value >>> 1
  return value
})

/** CRC-32 of an ASCII string (the random part is base62). */
function crc32(text: string): number {
  let crc = 0xffffffff
  for (let index = 0; index < text.length; index++) crc = CRC_TABLE[(crc ^ text.charCodeAt(index)) & 0xff]! ^ (crc >>> 8)
  return (crc ^ 0xffffffff) >>> 0
}
