/** Where a command writes its lines: standard output, or standard error for warnings. */
export type Print = (line: string) => void
