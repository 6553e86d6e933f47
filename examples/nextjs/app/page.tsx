export default function Home() {
  return (
    <>
      <h1>Capitol Notes</h1>
      <p>
        Our reading of the week in Congress. The legislators, committees and bills we write about are
        published as a read-only JSON:API at <code>/api/registry</code>, for anyone with a key:
      </p>
      <pre>curl -H &apos;Authorization: Bearer $KEY&apos; http://localhost:3000/api/registry/v1/entities</pre>
    </>
  )
}
