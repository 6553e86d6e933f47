export const ENTITY_ID_PATTERN = /^[0-9a-z]+$/
export const TEXT_ID_PATTERN = /^txt_[0-9a-f]{32}$/
export const RENDITION_ID_PATTERN = /^rnd_[0-9a-f]{32}$/

export function isEntityId(value: string): boolean {
  return ENTITY_ID_PATTERN.test(value)
}
