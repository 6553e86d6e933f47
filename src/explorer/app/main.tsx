import { render } from 'preact'
import { BASE_PATH_META } from '../page.js'
import { App } from './app.js'
import './styles.css'

const basePath = document.querySelector<HTMLMetaElement>(`meta[name="${BASE_PATH_META}"]`)?.content ?? ''
render(<App basePath={basePath} />, document.getElementById('explorer')!)
