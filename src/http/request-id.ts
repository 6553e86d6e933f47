/** A client's `X-Request-Id` is kept when it is 1 to 128 visible ASCII characters; otherwise one is made. */
const VALID_REQUEST_ID = /^[\x21-\x7e]{1,128}$/

export function requestIdOf(given: string | null): string {
  return given !== null && VALID_REQUEST_ID.test(given) ? given : randomUuid()
}

const HEX = Uint8Array.from('0123456789abcdef', (digit) => digit.charCodeAt(0))
/** Random bytes for 256 ids at a time (one call into the system's generator, as Node's own randomUUID does). */
const pool = new Uint8Array(4096)
let used = pool.length
const codes = new Uint8Array(36)

/**
 * A version 4 UUID as one flat string. Node's `crypto.randomUUID()` joins twenty pieces, which V8
 * keeps as a rope of fifteen strings (480 bytes) for as long as the id lives: a waiting long-poll's
 * or event stream's whole wait, ten thousand of them at once (bench/README.md, the live feed).
 */
export function randomUuid(): string {
  if (used === pool.length) {
    crypto.getRandomValues(pool)
    used = 0
  }
  let at = 0
  for (let index = 0; index < 16; index++) {
    let byte = pool[used + index]!
    if (index === 6) byte = (byte & 0x0f) | 0x40
    else if (index === 8) byte = (byte & 0x3f) | 0x80
    if (index === 4 || index === 6 || index === 8 || index === 10) codes[at++] = 0x2d
    codes[at++] = HEX[byte >> 4]!
    codes[at++] = HEX[byte & 0x0f]!
  }
  used += 16
  return String.fromCharCode.apply(null, codes as unknown as number[])
}
