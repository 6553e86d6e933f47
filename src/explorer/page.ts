/** A file of the page, named by its content's hash so that browsers may keep it for good. */
export interface ExplorerFile {
  name: string
  type: string
  body: string
}

/** Where the page's files are served, under the base path. */
export const EXPLORER_FILES_PATH = '/explore/'

/** The meta tag that tells the script where the API is mounted: the page holds no inline script. */
export const BASE_PATH_META = 'entity-registry-base-path'

const ATTRIBUTE_ESCAPES: Record<string, string> = { '&': '&amp;', '"': '&quot;', '<': '&lt;', '>': '&gt;' }
const escapeAttribute = (value: string) => value.replace(/[&"<>]/g, (character) => ATTRIBUTE_ESCAPES[character]!)

/** The page's HTML: a shell the script fills in. */
export function explorerHtml(basePath: string, script: ExplorerFile, stylesheet: ExplorerFile): string {
  const files = escapeAttribute(`${basePath}${EXPLORER_FILES_PATH}`)
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="${BASE_PATH_META}" content="${escapeAttribute(basePath)}">
<title>Registry explorer</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${files}${stylesheet.name}">
<script type="module" src="${files}${script.name}"></script>
</head>
<body>
<div id="explorer"></div>
<noscript>The explorer is a script that reads the API; it needs JavaScript.</noscript>
</body>
</html>
`
}
