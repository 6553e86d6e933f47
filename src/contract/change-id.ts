/**
 * Change ids: `echg_` and the feed sequence number in fixed-width base 36, so that they sort in
 * feed order as plain strings. Clients treat them as opaque.
 */
const WIDTH = 12
const CHANGE_ID = /^echg_[0-9a-z]{12}$/

export function encodeChangeId(sequence: number): string {
  return `echg_${sequence.toString(36).padStart(WIDTH, '0')}`
}

/** The sequence number of a change id, or null when the string is not one. */
export function decodeChangeId(id: string): number | null {
  if (!CHANGE_ID.test(id)) return null
  const sequence = Number.parseInt(id.slice(5), 36)
  return Number.isSafeInteger(sequence) ? sequence : null
}
