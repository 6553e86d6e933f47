import type { StoredRendition } from './entity.js'

const EXTENSION = /^[a-z0-9]+$/

/** Extensions of the media types renditions usually have; anything else downloads as `.bin`. */
const EXTENSION_BY_MIME: Record<string, string> = {
  'text/html': 'html',
  'application/xhtml+xml': 'xhtml',
  'text/plain': 'txt',
  'text/markdown': 'md',
  'text/csv': 'csv',
  'text/xml': 'xml',
  'application/xml': 'xml',
  'application/json': 'json',
  'application/pdf': 'pdf',
  'application/rtf': 'rtf',
  'application/msword': 'doc',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.oasis.opendocument.text': 'odt',
  'application/epub+zip': 'epub',
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/tiff': 'tif',
}

/** The file extension of a rendition's download address: from its filename, else from its mime. */
export function extensionOf(rendition: Pick<StoredRendition, 'filename' | 'mime'>): string {
  const dot = rendition.filename.lastIndexOf('.')
  const fromName = dot === -1 ? '' : rendition.filename.slice(dot + 1).toLowerCase()
  if (EXTENSION.test(fromName)) return fromName
  const mime = rendition.mime.split(';')[0]!.trim().toLowerCase()
  return EXTENSION_BY_MIME[mime] ?? 'bin'
}
