import type { PublicSnapshot, StoredChange, StoredEntity, StoredText } from './entity.js'
import { EMPTY_ENTITY_TYPE } from './fields.js'
import { extensionOf } from './extension.js'
import { LINK_BASE, type ResourceTemplate } from './resource-template.js'

/** A value inside a JSON string, escaped: JSON.stringify without the quotes. */
const escaped = (text: string) => JSON.stringify(text).slice(1, -1)

/** `"name":value` pairs of an object's own entries, skipping undefined values as JSON.stringify does. */
function members(object: object, render: (key: string, value: unknown) => string | undefined): string {
  const parts: string[] = []
  for (const [key, value] of Object.entries(object)) {
    const rendered = render(key, value)
    if (rendered !== undefined) parts.push(`${JSON.stringify(key)}:${rendered}`)
  }
  return parts.join(',')
}

const link = (path: string) => `"${LINK_BASE}${escaped(path)}"`

function textJson(entityId: string, text: StoredText): string {
  return `{${members(text, (key, value) =>
    key !== 'renditions'
      ? JSON.stringify(value)
      : `[${text.renditions
          .map(
            (rendition) =>
              // The bytes' hash is where they are kept, never served.
              `{${members(rendition, (field, fieldValue) => (field === 'sha256' ? undefined : JSON.stringify(fieldValue)))},"links":{"content":${link(
                `/v1/entities/${entityId}/renditions/${rendition.renditionId}.${extensionOf(rendition)}`,
              )}}}`,
          )
          .join(',')}]`,
  )}}`
}

/** `attributes`: every contract field but `type`, and the texts with their renditions' download links. */
function attributesJson(entityId: string, snapshot: PublicSnapshot, extra = ''): string {
  const fields = members(snapshot, (key, value) => (key === 'type' || key === 'texts' ? undefined : JSON.stringify(value)))
  const texts = `"texts":[${snapshot.texts.map((text) => textJson(entityId, text)).join(',')}]`
  return `{${fields === '' ? '' : `${fields},`}${texts}${extra}}`
}

const typeOf = (snapshot: PublicSnapshot) => JSON.stringify(snapshot.type ?? EMPTY_ENTITY_TYPE)

export function renderEntityResource(entity: Pick<StoredEntity, 'id' | 'snapshot'>): ResourceTemplate {
  const id = JSON.stringify(entity.id)
  return `{"type":${typeOf(entity.snapshot)},"id":${id},"attributes":${attributesJson(entity.id, entity.snapshot)},"links":{"self":${link(`/v1/entities/${entity.id}`)}}}`
}

export function renderChangeResource(change: StoredChange): ResourceTemplate {
  const extra = `,"changeType":${JSON.stringify(change.changeType)},"changedKeys":${JSON.stringify(change.changedKeys)},"mergedInto":${JSON.stringify(change.mergedInto)},"recordedAt":${JSON.stringify(change.recordedAt)}`
  const entity = `{"data":{"type":${typeOf(change.snapshot)},"id":${JSON.stringify(change.entityId)}},"links":{"related":${link(`/v1/entities/${change.entityId}`)}}}`
  return `{"type":"entity-change","id":${JSON.stringify(change.changeId)},"attributes":${attributesJson(change.entityId, change.snapshot, extra)},"relationships":{"entity":${entity}}}`
}

/**
 * Templates (one, or several joined) made JSON, with `linkBase` in place of LINK_BASE. Split and
 * joined, not `replaceAll`: V8 builds that answer as a rope of two pieces a link, which the write
 * then copies flat (7 us of a 27 KB page's 149, bench/README.md); `join` makes it flat at once.
 */
export function fillResourceTemplate(template: ResourceTemplate, linkBase: string): string {
  return template.split(LINK_BASE).join(linkBaseOf(linkBase).escaped)
}

const encoder = new TextEncoder()

/** The last link base, escaped and as its UTF-8 bytes: requests come to one base, or a few. */
let lastLinkBase = { base: '', escaped: '', bytes: new Uint8Array(0) }
function linkBaseOf(base: string): { escaped: string; bytes: Uint8Array } {
  if (lastLinkBase.base !== base) {
    const escapedBase = escaped(base)
    lastLinkBase = { base, escaped: escapedBase, bytes: encoder.encode(escapedBase) }
  }
  return lastLinkBase
}

const LINK_BASE_BYTE = LINK_BASE.charCodeAt(0)
/** The most UTF-8 bytes a UTF-16 code unit takes. */
const MAX_UTF8_PER_UNIT = 3

/**
 * `before`, then templates given as their UTF-8 bytes (one, or several joined) made JSON with
 * `linkBase` in place of LINK_BASE, then `after`: one buffer, the bytes never decoded. A Node
 * `Buffer` finds LINK_BASE several times faster than a plain Uint8Array's `indexOf`. `before` and
 * `after` are encoded into the buffer (room for the most their UTF-8 can take), not encoded apart
 * and copied: 6 to 9 us of a 46 KB page in a loop.
 */
export function fillResourceTemplateBytes(before: string, template: Uint8Array, after: string, linkBase: string): Uint8Array {
  const base = linkBaseOf(linkBase).bytes
  const found: number[] = []
  for (let at = template.indexOf(LINK_BASE_BYTE); at !== -1; at = template.indexOf(LINK_BASE_BYTE, at + 1)) found.push(at)
  // Copied from a plain view: a Buffer's subarray is a Buffer, slower to make.
  const bytes = new Uint8Array(template.buffer, template.byteOffset, template.byteLength)
  const filled = new Uint8Array((before.length + after.length) * MAX_UTF8_PER_UNIT + template.length + found.length * (base.length - 1))
  let written = encoder.encodeInto(before, filled).written
  let from = 0
  for (const at of found) {
    filled.set(bytes.subarray(from, at), written)
    written += at - from
    filled.set(base, written)
    written += base.length
    from = at + 1
  }
  filled.set(bytes.subarray(from), written)
  written += template.length - from
  written += encoder.encodeInto(after, filled.subarray(written)).written
  return filled.subarray(0, written)
}
