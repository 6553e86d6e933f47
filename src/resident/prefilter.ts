import type { PublicSnapshot } from '../contract/entity.js'
import { matchesQualifiers } from '../gffs/evaluate.js'
import type { Qualifier } from '../gffs/types.js'
import { type Documents, FieldColumn, KEPT_FIELDS } from './documents.js'

/** A kept field's code in `Prefilter.refusesEvery` where the slots hold several. */
export const MIXED_CODES = 0xffffffff

/** A prefilter over slots: whether a live slot's kept fields match every qualifier. */
export interface Prefilter {
  allows(slot: number): boolean
  /** Whether it refuses every slot whose kept fields hold these codes (in `KEPT_FIELDS`' order; `MIXED_CODES`: several). */
  refusesEvery(codes: Uint32Array): boolean
  /** Slots that may match, when a qualifier names the values it allows: the lists of their slots (dead ones included). Null: every slot may. */
  narrowest(): SlotList[] | null
}

export interface SlotList {
  slots: Uint32Array
  length: number
}

/**
 * The qualifiers (every field held: `Documents.keepsFieldsOf`) as a test of codes: each qualifier is
 * evaluated once per distinct value of its field (`matchesQualifiers`, the list filters' own
 * semantics), then a slot is a lookup a qualifier. Null when there are none.
 */
export function prefilterOf(documents: Documents, qualifiers: readonly Qualifier[]): Prefilter | null {
  if (qualifiers.length === 0) return null
  const tests = qualifiers.map((qualifier) => {
    const column = documents.columnOf(qualifier.field)
    const allowed = new Uint8Array(column.values.length)
    column.values.forEach((value, code) => {
      const snapshot = { texts: [], ...(value === undefined ? {} : { [qualifier.field]: value }) } as unknown as PublicSnapshot
      allowed[code] = matchesQualifiers([qualifier], snapshot) ? 1 : 0
    })
    return { codes: column.codes.values, allowed, qualifier, column, field: (KEPT_FIELDS as readonly string[]).indexOf(qualifier.field) }
  })
  const columns = tests.map((test) => test.codes)
  const alloweds = tests.map((test) => test.allowed)
  return {
    allows(slot) {
      for (let at = 0; at < columns.length; at++) if (alloweds[at]![columns[at]![slot]!] !== 1) return false
      return true
    },
    refusesEvery(codes) {
      // A wide field (not kept: `field` -1) has no code here; its qualifier refuses no chain whole.
      return tests.some(({ allowed, field }) => field >= 0 && codes[field] !== MIXED_CODES && allowed[codes[field]!] !== 1)
    },
    narrowest() {
      // An equality names its values: the smallest such union is where matching slots can be.
      let best: SlotList[] | null = null
      let size = Infinity
      for (const { qualifier, column } of tests) {
        // A wide field's values list no slots (as many lists as entities): its qualifier is asked of each.
        if (qualifier.op !== 'eq' || qualifier.negated || !(column instanceof FieldColumn)) continue
        const lists = qualifier.values.flatMap((value) => {
          const code = column.codeOf.get(value)
          return code === undefined ? [] : [{ slots: column.slots[code]!.values, length: column.slots[code]!.length }]
        })
        const total = lists.reduce((sum, list) => sum + list.length, 0)
        if (total < size) {
          best = lists
          size = total
        }
      }
      return best
    },
  }
}
