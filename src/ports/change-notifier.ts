/**
 * A wake-up signal: "the change feed's head may have moved". It carries no change: whoever is woken
 * reads the feed. A notifier may wake its subscribers for nothing (a write that appended no change),
 * never fail to wake them after a change commits.
 */
export interface ChangeNotifier {
  /**
   * Calls `onChange` after each commit the notifier notices, from now on; returns the unsubscribe.
   * A notifier watches (polls, listens) only while it has subscribers.
   */
  subscribe(onChange: () => void): () => void
  /** Stops watching for good (a connection of its own closed). */
  close?(): Promise<void>
}
