import type { StoredRendition } from './entity.js'

/** The blob key of bytes with this SHA-256 (hex): content-addressed, so shared by equal bytes. */
export function contentKey(sha256: string): string {
  return `sha256-${sha256}`
}

/** Where a rendition's bytes are: under their hash when import recorded one, else under its id. */
export function blobKeyOf(rendition: StoredRendition): string {
  return rendition.sha256 === undefined ? rendition.renditionId : contentKey(rendition.sha256)
}
