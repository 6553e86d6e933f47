/**
 * `target` with one member replaced; every other member is the target's own, functions bound to it
 * (Kysely and pg keep state in private fields, which only the real instance can read).
 */
export function overriding<T extends object>(target: T, member: keyof T, replacement: unknown): T {
  return new Proxy(target, {
    get(object, property) {
      if (property === member) return replacement
      const value: unknown = Reflect.get(object, property, object)
      return typeof value === 'function' ? value.bind(object) : value
    },
  })
}
