/** Polls `check` every `everyMs` until it holds: whether it did within `ms`. */
export async function holdsWithin(ms: number, check: () => Promise<boolean> | boolean, everyMs = 100): Promise<boolean> {
  const deadline = Date.now() + ms
  for (;;) {
    if (await check()) return true
    if (Date.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}

/** Polls `check` until it holds: how long that took (ms); throws when it did not within `ms`. */
export async function within(ms: number, check: () => Promise<boolean> | boolean): Promise<number> {
  const started = Date.now()
  if (!(await holdsWithin(ms, check))) throw new Error(`not within ${ms} ms`)
  return Date.now() - started
}
