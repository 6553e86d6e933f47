// Preloaded (`node --import ./bench/profile-hook.mjs …`) into a server that profile-get.mjs profiles:
// SIGUSR2 starts V8's CPU profiler, the next SIGUSR2 stops it and writes the profile to $CPU_PROFILE,
// so that the profile holds the load and nothing of the start.
import { writeFileSync } from 'node:fs'
import { Session } from 'node:inspector'

const session = new Session()
session.connect()
const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))))
let profiling = false
process.on('SIGUSR2', async () => {
  profiling = !profiling
  if (profiling) {
    await post('Profiler.enable')
    await post('Profiler.setSamplingInterval', { interval: Number(process.env.CPU_PROFILE_INTERVAL ?? 200) })
    await post('Profiler.start')
  } else {
    const { profile } = await post('Profiler.stop')
    writeFileSync(process.env.CPU_PROFILE, JSON.stringify(profile))
  }
})
