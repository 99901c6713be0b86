/**
 * `npm run docs:screenshots`: writes docs/status-page-*.png, the status page in each of its
 * states (scripts/status-page-scenes.ts), taken by Debian's chromium (CHROMIUM to use another)
 * through playwright-core, at 1280 px; and docs/status-page-phone.png, one state at 375 px.
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { scenes, startScene, type Scene } from './status-page-scenes.ts';

const CLI = fileURLToPath(new URL('../src/cli.ts', import.meta.url));
const DOCS = new URL('../docs/', import.meta.url);
const PHONE_SCENE = 'invalid';

async function shoot(browser: Browser, scene: Scene, width: number, file: string): Promise<void> {
  const running = await startScene(scene, CLI);
  try {
    const context = await browser.newContext({
      viewport: { width, height: width < 600 ? 812 : 800 },
      colorScheme: 'light',
    });
    try {
      const page = await context.newPage();
      await page.goto(`${running.url}/`);
      const target = fileURLToPath(new URL(file, DOCS));
      await writeFile(target, await page.screenshot({ fullPage: true }));
      process.stdout.write(`wrote docs/${file} (${scene.title})\n`);
    } finally {
      await context.close();
    }
  } finally {
    await running.stop();
  }
}

const browser = await chromium.launch({
  executablePath: process.env['CHROMIUM'] ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
});
try {
  const all = scenes(Date.now());
  for (const scene of all) await shoot(browser, scene, 1280, `status-page-${scene.name}.png`);
  const phone = all.find((scene) => scene.name === PHONE_SCENE);
  if (phone !== undefined) await shoot(browser, phone, 375, 'status-page-phone.png');
} finally {
  await browser.close();
}
