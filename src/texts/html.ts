import { parse } from 'parse5'
import { TEXT_LIMITS, type Extraction } from './limits.js'
import { decodeText } from './plain.js'

/** Elements whose content is no text a reader sees. */
const HIDDEN = new Set(['script', 'style', 'noscript', 'template', 'head', 'svg', 'math', 'iframe', 'object', 'canvas'])
/** Elements that break a line: words on either side are not one word. */
const BLOCKS = new Set(['address', 'article', 'aside', 'blockquote', 'br', 'dd', 'div', 'dl', 'dt', 'figcaption', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'nav', 'ol', 'p', 'pre', 'section', 'table', 'td', 'th', 'tr', 'ul'])
/** `<meta charset>` or `http-equiv` content's charset, in the first bytes (the HTML standard's prescan, simplified). */
const META_CHARSET = /<meta[^>]+charset\s*=\s*["']?\s*([\w-]+)/i

/** What parse5's tree gives (the same shape in its versions 5 to 8). */
interface HtmlNode {
  nodeName: string
  value?: string
  childNodes?: HtmlNode[]
}

/**
 * The text of an HTML document as a reader sees it: scripts, styles and markup dropped, character
 * references decoded (parse5, the WHATWG parser), a line break at each block. The charset is the
 * one given (the rendition's MIME parameter), else the document's `<meta>`, else UTF-8.
 */
export function extractHtml(bytes: Uint8Array, charset?: string): Extraction {
  const declared = charset ?? META_CHARSET.exec(new TextDecoder('latin1').decode(bytes.subarray(0, 1024)))?.[1]
  const decoded = decodeText(bytes, declared)
  if (!('text' in decoded)) return decoded
  const parts: string[] = []
  let length = 0
  // Depth-first with a stack: a document nested ten thousand deep does not overflow the call stack.
  const stack: HtmlNode[] = [parse(decoded.text) as HtmlNode]
  while (stack.length > 0 && length < TEXT_LIMITS.maxChars) {
    const node = stack.pop()!
    if (node.nodeName === '#text') {
      parts.push(node.value!)
      length += node.value!.length
    } else if (node.nodeName === '#break') {
      parts.push('\n')
    } else if (!HIDDEN.has(node.nodeName) && node.childNodes) {
      if (BLOCKS.has(node.nodeName)) stack.push({ nodeName: '#break' })
      for (let index = node.childNodes.length - 1; index >= 0; index--) stack.push(node.childNodes[index]!)
      if (BLOCKS.has(node.nodeName)) stack.push({ nodeName: '#break' })
    }
  }
  const text = parts
    .join('')
    .replace(/[ \t\f\r\u00a0]+/g, ' ')
    .replace(/ ?\n[\n ]*/g, '\n')
    .trim()
  return { text: text.slice(0, TEXT_LIMITS.maxChars) }
}
