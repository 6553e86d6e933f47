/** pino's levels, most severe first; `silent` logs nothing. Apart from logger.ts: the CLI checks them without loading pino. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

export const LOG_FORMATS = ['json', 'pretty'] as const
/** `json`: one JSON object a line, for log pipelines; `pretty`: for people at a terminal. */
export type LogFormat = (typeof LOG_FORMATS)[number]
