import { h, type ComponentChildren, type VNode } from 'preact';
import { html } from 'htm/preact';
import { isLosslessNumber, stringify as stringifyLossless } from 'lossless-json';
import { renderToString } from 'preact-render-to-string';
import type { AdminCaller } from '../../platform/caller.ts';

/**
 * The console's pages (issue 29): server-rendered HTML from Preact components (htm templates,
 * rendered to a string on the server; every value is escaped by the renderer). No script runs in
 * the browser: links and forms only, so the Content-Security-Policy allows none and every control
 * is a native, keyboard-usable element.
 */
export { html };

export interface PageFrame {
  title: string;
  caller: AdminCaller | null;
  csrf: string | null;
  notice?: string | null;
  error?: string | null;
}

function Nav({ caller, csrf }: { caller: AdminCaller; csrf: string }) {
  return html`<header class="top">
    <nav aria-label="Console">
      <a href="/console">Search</a>
      <a href="/console/kyc">KYC queue</a>
      <a href="/console/restrictions">Restrictions</a>
      <a href="/console/ledger">Ledger</a>
      <a href="/console/audit">Audit trail</a>
      ${caller.role === 'admin' ? html`<a href="/console/operators">Operators</a>` : null}
    </nav>
    <div class="me">
      <span>Signed in as <strong>${caller.actor}</strong> (${caller.role})</span>
      <form method="post" action="/console/logout"><input type="hidden" name="_csrf" value=${csrf} /><button type="submit">Log out</button></form>
    </div>
  </header>`;
}

export function page(frame: PageFrame, body: ComponentChildren): string {
  const doc = html`<html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>${frame.title} · Operator console</title>
      <link rel="stylesheet" href="/console/assets/console.css" />
      <link rel="icon" href="/console/assets/favicon.svg" type="image/svg+xml" />
    </head>
    <body>
      <a class="skip" href="#main">Skip to content</a>
      ${frame.caller && frame.csrf ? h(Nav, { caller: frame.caller, csrf: frame.csrf }) : null}
      <main id="main">
        <h1>${frame.title}</h1>
        ${frame.notice ? html`<p class="notice" role="status">${frame.notice}</p>` : null}
        ${frame.error ? html`<p class="error" role="alert">${frame.error}</p>` : null}
        ${body}
      </main>
    </body>
  </html>`;
  return `<!doctype html>${renderToString(doc as VNode)}`;
}

/** A POST form carrying the session's CSRF token. */
export function ActionForm(props: { action: string; csrf: string; label: string; children?: ComponentChildren; danger?: boolean }) {
  return html`<form method="post" action=${props.action} class="action">
    <input type="hidden" name="_csrf" value=${props.csrf} />
    ${props.children}
    <button type="submit" class=${props.danger ? 'danger' : ''}>${props.label}</button>
  </form>`;
}

export function Table(props: { caption: string; head: string[]; rows: ComponentChildren[][]; empty?: string }) {
  if (props.rows.length === 0) return html`<p>${props.empty ?? 'Nothing to show.'}</p>`;
  return html`<div class="scroll" role="region" aria-label=${props.caption} tabindex="0"><table>
    <caption>${props.caption}</caption>
    <thead><tr>${props.head.map((c) => html`<th scope="col">${c}</th>`)}</tr></thead>
    <tbody>${props.rows.map((r) => html`<tr>${r.map((c) => html`<td>${c}</td>`)}</tr>`)}</tbody>
  </table></div>`;
}

export function Facts(props: { label: string; facts: [string, ComponentChildren][] }) {
  return html`<dl aria-label=${props.label}>${props.facts.map(([k, v]) => html`<div class="fact"><dt>${k}</dt><dd>${v ?? '—'}</dd></div>`)}</dl>`;
}

export function Pager(props: { label: string; prev: string | null; next: string | null; prevText?: string }) {
  if (!props.prev && !props.next) return null;
  return html`<nav class="pager" aria-label=${props.label}>
    ${props.prev ? html`<a href=${props.prev} rel="prev">${props.prevText ?? 'Previous page'}</a>` : null}
    ${props.next ? html`<a href=${props.next} rel="next">Next page</a>` : null}
  </nav>`;
}

/** Card numbers are only ever shown masked: the last four digits. */
export function maskedPan(last4: string): string {
  return `•••• •••• •••• ${last4}`;
}

export function link(href: string, text: string) {
  return html`<a href=${href}>${text}</a>`;
}

export function show(value: unknown): string {
  if (value === null || value === undefined || value === '') return '—';
  // Amounts arrive as lossless numbers: their exact digits, never a JS number.
  if (isLosslessNumber(value)) return value.toString();
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object') return stringifyLossless(value) ?? '';
  return String(value);
}

/**
 * The console's icon (review rvF): without one the browser asked for /favicon.ico on every page,
 * got a 404 and logged "Failed to load resource" in its console on every page load.
 */
export const FAVICON = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect x="1" y="3" width="14" height="10" rx="2" fill="#1f4e79"/><rect x="1" y="5" width="14" height="2" fill="#fff"/></svg>';

export const STYLESHEET = `
:root { color-scheme: light; --fg: #1b1f24; --muted: #505a66; --accent: #0b57d0; --bad: #a1120a; --ok: #1d6b2f; --line: #c9d1d9; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: #fff; }
.skip { position: absolute; left: -999px; top: 0; background: #fff; padding: .5em; }
.skip:focus { left: .5em; }
header.top { display: flex; flex-wrap: wrap; justify-content: space-between; gap: 1em; padding: .6em 1.2em; background: #eef2f7; border-bottom: 1px solid var(--line); }
header.top nav a { margin-right: 1em; }
.me { display: flex; gap: .8em; align-items: center; }
.me form { display: inline; }
main { padding: 1em 1.2em 3em; max-width: 1200px; }
h1 { font-size: 1.5em; margin: .3em 0 .6em; }
h2 { font-size: 1.2em; margin-top: 1.6em; }
a { color: var(--accent); }
a:focus, button:focus, input:focus, select:focus, textarea:focus { outline: 3px solid #f5a623; outline-offset: 2px; }
table { border-collapse: collapse; width: 100%; margin: .6em 0; }
caption { text-align: left; font-weight: 600; padding: .3em 0; }
th, td { border-bottom: 1px solid var(--line); padding: .35em .5em; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
dl { display: grid; grid-template-columns: repeat(auto-fill, minmax(260px, 1fr)); gap: .2em 1.5em; }
.fact dt { color: var(--muted); font-size: .85em; }
.fact dd { margin: 0 0 .4em; word-break: break-all; }
form.action { display: inline-flex; gap: .5em; align-items: center; margin: .2em .6em .2em 0; }
form.stack { display: grid; gap: .6em; max-width: 28em; }
label { font-weight: 600; }
input, select, textarea, button { font: inherit; padding: .35em .55em; }
button { background: var(--accent); color: #fff; border: 0; border-radius: 4px; cursor: pointer; }
button.danger { background: var(--bad); }
.notice { background: #e6f4ea; color: var(--ok); padding: .6em; border-radius: 4px; }
.error { background: #fce8e6; color: var(--bad); padding: .6em; border-radius: 4px; }
.secret { font-family: ui-monospace, monospace; background: #fff8e1; padding: .6em; }
.pager { margin: .6em 0; display: flex; gap: 1.5em; }
.scroll { overflow-x: auto; }
.declined { color: var(--bad); font-weight: 600; }
`;
