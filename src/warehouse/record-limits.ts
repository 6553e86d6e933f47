import { WarehouseError } from '../ports/warehouse.js'

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

/** The refusal of a record over `recordBytes` as JSON. */
export function recordTooLarge(bytes: number): WarehouseError {
  return new WarehouseError('invalid_record', `is ${bytes} bytes as JSON; a record may have at most ${RECORD_LIMITS.recordBytes}`)
}

/**
 * In place of an input line over `recordBytes` (`readLines`' `maxLineBytes`): the line was read
 * past as it streamed, never held nor parsed; `bytes` is its length.
 */
export class OverlongLine {
  constructor(readonly bytes: number) {}
}
