export { createRedisRateLimiter, type RedisRateLimiterOptions, type RedisEvalClient } from './redis-rate-limiter.js'
