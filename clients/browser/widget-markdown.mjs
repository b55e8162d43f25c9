// The chat widget rendering an answer that quotes Markdown: a table and a
// fenced code block (started by internal/app/widget_markdown_browser_test.go).
// Input on stdin: {chromium, artifacts, page, question}
// Prints {failure, console, text, table, code, codeClass, injected, screenshots}.

import { launch, log, readInput } from './lib.mjs';

const input = await readInput();
const out = { console: [], screenshots: [] };
const { context, close } = await launch(input);
const timeout = 20_000;

try {
  const page = await context.newPage();
  page.on('console', (m) => out.console.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => out.console.push(`pageerror: ${e.message}`));
  await page.goto(input.page);
  await page.waitForFunction(() => window.docsmith && window.docsmith.version, null, { timeout });
  await page.evaluate(() => window.docsmith.open());
  await page.locator('[role=dialog]').waitFor({ timeout });

  const box = page.locator('textarea[aria-label="Your question"]');
  await box.fill(input.question);
  await box.press('Enter');
  await page.waitForFunction(
    () => {
      const r = document.querySelector('docsmith-widget').shadowRoot;
      return r.querySelector('.msg.assistant .actions') || r.querySelector('.error[role=alert]');
    },
    null,
    { timeout },
  );
  Object.assign(
    out,
    await page.evaluate(() => {
      const r = document.querySelector('docsmith-widget').shadowRoot;
      const md = r.querySelector('.msg.assistant .md');
      const table = md?.querySelector('table');
      const code = md?.querySelector('pre code');
      return {
        text: md?.textContent ?? '',
        error: r.querySelector('.error[role=alert] p')?.textContent ?? '',
        table: table
          ? {
              head: [...table.querySelectorAll('thead th')].map((c) => c.textContent.trim()),
              rows: [...table.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((c) => c.textContent.trim())),
              align: [...table.querySelectorAll('tbody tr:first-child td')].map((c) => getComputedStyle(c).textAlign),
              border: table.querySelector('td') ? getComputedStyle(table.querySelector('td')).borderTopStyle : '',
            }
          : null,
        code: code?.textContent ?? null,
        codeClass: code?.className ?? '',
        copyButton: !!md?.querySelector('.code button.copy'),
        injected: !!window.__pwned || !!md?.querySelector('img, script, iframe, [onerror]'),
      };
    }),
  );
  log('answer', out.text.slice(0, 200));

  // Screenshots with the table and the code block in view: light and dark,
  // desktop and phone.
  for (const [name, size] of [
    ['desktop', { width: 1280, height: 800 }],
    ['phone', { width: 390, height: 844 }],
  ]) {
    await page.setViewportSize(size);
    for (const scheme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.evaluate(() => document.querySelector('docsmith-widget').shadowRoot.querySelector('.msg.assistant .md table')?.scrollIntoView({ block: 'start' }));
      await page.waitForTimeout(150);
      const file = `${input.artifacts}/widget-markdown-${name}-${scheme}.png`;
      await page.screenshot({ path: file });
      const bg = await page.locator('.panel').evaluate((el) => getComputedStyle(el).backgroundColor);
      out.screenshots.push({ file, scheme, name, panelBackground: bg });
    }
  }
} catch (err) {
  out.failure = String(err?.stack ?? err);
} finally {
  await close();
}
process.stdout.write(JSON.stringify(out));
