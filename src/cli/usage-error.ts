/** Bad usage: one line on stderr and exit code 2; nothing was done. */
export class UsageError extends Error {}
