export default function Home() {
  return (
    <>
      <h1>Capitol Notes</h1>
      <p>
        The legislators, committees and bills we write about, as a read-only JSON:API at <code>/api/registry</code> (
        <a href="/api/registry/v1/openapi.json">its description</a>, <a href="/api/registry/explore">the explorer</a>).
      </p>
    </>
  )
}
