import type { ChangeNotifier } from '../ports/change-notifier.js'

/**
 * A notifier whose watch runs only while it has subscribers: `start` begins it with a function that
 * wakes them all, and returns what stops it.
 */
export function watchWhileSubscribed(start: (wake: () => void) => () => void): ChangeNotifier {
  const listeners = new Set<() => void>()
  let stop: (() => void) | undefined
  const wake = () => {
    for (const listener of listeners) listener()
  }
  return {
    subscribe(onChange) {
      // A function of its own: one listener subscribed twice is two subscriptions.
      const listener = () => onChange()
      listeners.add(listener)
      stop ??= start(wake)
      return () => {
        listeners.delete(listener)
        if (listeners.size === 0 && stop !== undefined) {
          stop()
          stop = undefined
        }
      }
    },
    async close() {
      listeners.clear()
      stop?.()
      stop = undefined
    },
  }
}

/** What writes through this process announce at once: the warehouse calls `notify` after each commit. */
export interface LocalNotifier extends ChangeNotifier {
  notify(): void
}

export function createLocalNotifier(): LocalNotifier {
  const listeners = new Set<() => void>()
  return {
    subscribe(onChange) {
      const listener = () => onChange()
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    notify() {
      for (const listener of listeners) listener()
    },
  }
}

/**
 * Wakes its subscribers at its first read and whenever a value read every `intervalMs` changes (a
 * database's commit counter, the feed's head): one read an interval whoever waits, and none while nobody does. A failed read
 * (the database away) is retried at the next interval and wakes nobody.
 */
export function pollingNotifier(read: () => Promise<unknown> | unknown, intervalMs: number, { onStop }: { onStop?: () => void } = {}): ChangeNotifier {
  return watchWhileSubscribed((wake) => {
    let last: unknown
    let first = true
    let stopped = false
    let timer: ReturnType<typeof setTimeout> | undefined
    const poll = async () => {
      try {
        const value = await read()
        // The first read wakes too: a commit between a waiter's own read and this one (or while a
        // listener found that notifications do not come back) changed no head this watch had seen.
        if (first || value !== last) wake()
        first = false
        last = value
      } catch {
        // Away: the next read tells.
      }
      if (!stopped) timer = setTimeout(poll, intervalMs)
    }
    void poll()
    return () => {
      stopped = true
      clearTimeout(timer)
      onStop?.()
    }
  })
}

/** One notifier over several: a subscriber is woken by any of them. */
export function combineNotifiers(...notifiers: ChangeNotifier[]): ChangeNotifier {
  return {
    subscribe(onChange) {
      const stops = notifiers.map((notifier) => notifier.subscribe(onChange))
      return () => stops.forEach((stop) => stop())
    },
    async close() {
      await Promise.all(notifiers.map((notifier) => notifier.close?.()))
    },
  }
}
