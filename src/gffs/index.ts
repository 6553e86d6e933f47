export { parseGffs, type ParseOptions } from './parse.js'
export { matchesQualifiers, compareCodePoints, foldCase } from './evaluate.js'
export { GffsError, type GffsErrorCode } from './errors.js'
export * from './types.js'
