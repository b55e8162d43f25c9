// Shared by the browser scenarios: read the input the Go test sends on
// stdin, and launch Debian's chromium through playwright-core with a fresh
// profile.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

export async function readInput() {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/** launch starts chromium headless with a throwaway user data directory; close() removes it. */
export async function launch(input, options = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'docsmith-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: input.chromium,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1280, height: 800 },
    ...options,
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** log writes a progress line for the Go test's log. */
export function log(...args) {
  process.stderr.write(args.join(' ') + '\n');
}
