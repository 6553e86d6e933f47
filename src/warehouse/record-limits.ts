/**
 * What a record may hold, so that every store keeps it and every answer can carry it: a public
 * snapshot bounds one resource (a page holds 100), a record bounds one write.
 */
export const RECORD_LIMITS = {
  /** The public snapshot (contract fields and texts) as JSON, in bytes. */
  publicSnapshotBytes: 64 * 1024,
  /** The whole record, private keys included, as JSON, in bytes. */
  recordBytes: 1024 * 1024,
} as const
