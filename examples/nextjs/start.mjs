// `npm start`: builds when there is no build yet, then `next start` on PORT (0: a free port) and
// HOST, and prints `listening on http://HOST:PORT` once the app answers.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createServer } from 'node:net'

const host = process.env.HOST ?? '127.0.0.1'
let port = Number(process.env.PORT ?? 3000)
if (port === 0) {
  port = await new Promise((resolve) => {
    const probe = createServer().listen(0, host, () => {
      const { port: free } = probe.address()
      probe.close(() => resolve(free))
    })
  })
}

if (!existsSync('.next/BUILD_ID')) {
  const build = spawnSync('npx', ['next', 'build'], { stdio: 'inherit' })
  if (build.status !== 0) process.exit(build.status ?? 1)
}

const next = spawn('npx', ['next', 'start', '--port', String(port), '--hostname', host], { stdio: ['ignore', 'inherit', 'inherit'] })
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => next.kill(signal))
next.once('exit', (code) => process.exit(code ?? 0))

const url = `http://${host}:${port}`
for (let attempt = 0; attempt < 600; attempt += 1) {
  const answered = await fetch(`${url}/about`).then(() => true, () => false)
  if (answered) {
    console.log(`listening on ${url}`)
    break
  }
  await new Promise((resolve) => setTimeout(resolve, 100))
}
