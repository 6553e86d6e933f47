// Preloaded (`node --require`) into a process whose memory a test measures: prints its peak resident
// set size, in bytes, on stderr as it exits.
process.on('exit', () => process.stderr.write(`max-rss ${process.resourceUsage().maxRSS * 1024}\n`))
