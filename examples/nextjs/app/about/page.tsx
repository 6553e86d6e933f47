export default function About() {
  return (
    <>
      <h1>About</h1>
      <p>
        This page stands for the rest of an app that was here before the registry: the registry is one
        route (<code>app/api/registry/[[...path]]/route.ts</code>) and touches nothing else.
      </p>
    </>
  )
}
