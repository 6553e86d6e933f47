/** FNV-1a's offset basis: the hash before any value is mixed in. */
export const FNV_OFFSET_BASIS = 2166136261

/** `hash` with one more value (a byte, a UTF-16 unit) mixed in by FNV-1a; `>>> 0` makes the result unsigned. */
export function fnvMix(hash: number, value: number): number {
  return Math.imul(hash ^ value, 16777619)
}
