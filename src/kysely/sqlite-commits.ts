import type { ChangeNotifier } from '../ports/change-notifier.js'
import { pollingNotifier } from '../live-feed/notifiers.js'

/** What the watch needs of a SQLite connection: better-sqlite3's and `node:sqlite`'s alike. */
interface WatchConnection {
  prepare(sql: string): { all(parameters: readonly unknown[]): unknown[] }
  close(): unknown
}

/** How often another process's commits are looked for, while a request waits. */
export const SQLITE_COMMIT_POLL_MS = 50

/**
 * Commits to a SQLite file by any connection, this process's or another's (the `import` CLI): on a
 * connection of its own, `PRAGMA data_version` changes whenever another connection committed. Read
 * every `intervalMs` while someone waits (a few microseconds, no I/O but a shared-memory read in WAL
 * mode); the connection is opened with the first subscriber and closed with the last.
 */
export function sqliteCommitNotifier(file: string, open: (file: string) => Promise<WatchConnection>, intervalMs = SQLITE_COMMIT_POLL_MS): ChangeNotifier {
  let connection: Promise<WatchConnection> | undefined
  let statement: { all(parameters: readonly unknown[]): unknown[] } | undefined
  return pollingNotifier(
    async () => {
      if (connection === undefined) {
        connection = open(file)
        statement = undefined
      }
      statement ??= (await connection).prepare('pragma data_version')
      return (statement.all([])[0] as { data_version: number }).data_version
    },
    intervalMs,
    {
      onStop() {
        void connection?.then((opened) => opened.close()).catch(() => {})
        connection = undefined
      },
    },
  )
}
