import assert from 'node:assert/strict'

/** Deep strict equality, with a diff in the message. */
export function equal<T>(actual: unknown, expected: T, message?: string): void {
  assert.deepStrictEqual(actual, expected, message)
}

/** `actual` has at least the given keys with these values (the rest is not compared). */
export function hasFields(actual: unknown, expected: Record<string, unknown>, message?: string): void {
  assert.ok(typeof actual === 'object' && actual !== null, message ?? `expected an object, got ${String(actual)}`)
  const picked = Object.fromEntries(Object.keys(expected).map((key) => [key, (actual as Record<string, unknown>)[key]]))
  assert.deepStrictEqual(picked, expected, message)
}

/** The operation is refused with a WarehouseError of this code. */
export async function refused(operation: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(operation, (error: unknown) => {
    hasFields(error, { name: 'WarehouseError', code })
    return true
  })
}
