export const JSON_API_MEDIA_TYPE = 'application/vnd.api+json'

interface MediaType {
  type: string
  parameterNames: string[]
}

/** Splits a header such as Accept into media types, honouring quoted parameter values. */
function parseMediaTypes(header: string): MediaType[] {
  const types: MediaType[] = []
  let current = ''
  let quoted = false
  const flush = () => {
    const [type = '', ...parameters] = current.split(';').map((part) => part.trim())
    if (type !== '') {
      types.push({
        type: type.toLowerCase(),
        parameterNames: parameters.filter((p) => p !== '').map((p) => p.split('=')[0]!.trim().toLowerCase()),
      })
    }
    current = ''
  }
  for (const char of header) {
    if (char === '"') quoted = !quoted
    if (char === ',' && !quoted) flush()
    else current += char
  }
  flush()
  return types
}

/** JSON:API allows only `ext` and `profile` as media type parameters (`q` is Accept's own). */
function hasForeignParameters(mediaType: MediaType, allowed: readonly string[]): boolean {
  return mediaType.parameterNames.some((name) => !allowed.includes(name))
}

/** 406 when every JSON:API media type in Accept carries parameters other than ext/profile. */
export function isAcceptable(accept: string | null): boolean {
  if (accept === null) return true
  const jsonApiTypes = parseMediaTypes(accept).filter((mediaType) => mediaType.type === JSON_API_MEDIA_TYPE)
  return jsonApiTypes.length === 0 || jsonApiTypes.some((mediaType) => !hasForeignParameters(mediaType, ['ext', 'profile', 'q']))
}

/** 415 when the request declares JSON:API content with parameters other than ext/profile. */
export function isSupportedContentType(contentType: string | null): boolean {
  if (contentType === null) return true
  const [mediaType] = parseMediaTypes(contentType)
  return mediaType?.type !== JSON_API_MEDIA_TYPE || !hasForeignParameters(mediaType, ['ext', 'profile'])
}
