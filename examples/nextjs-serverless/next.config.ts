import type { NextConfig } from 'next'

const config: NextConfig = {
  // `.next/standalone`: a server and only the files it needs, to deploy as a function or a container.
  output: 'standalone',
  // No image here to optimize: the server does without sharp and its native libraries (30 MB).
  images: { unoptimized: true },
  outputFileTracingExcludes: { '*': ['**/node_modules/sharp/**/*', '**/node_modules/@img/**/*'] },
}

export default config
