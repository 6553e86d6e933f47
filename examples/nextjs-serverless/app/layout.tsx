import type { ReactNode } from 'react'

export const metadata = { title: 'Capitol Notes', description: 'Notes on the US Congress' }

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body style={{ fontFamily: 'system-ui, sans-serif', maxWidth: 720, margin: '2rem auto', lineHeight: 1.5 }}>{children}</body>
    </html>
  )
}
