// After `tsc -p tsconfig.build.json`: copy what the compiled service reads at run time beside its
// JavaScript (SQL migrations and any other non-TypeScript file under src/), so dist/ runs alone.
// A copied file whose source is gone (a migration removed before it landed) is removed from dist/
// too: the service would otherwise apply a migration the source no longer has.
import { cpSync, existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';

const compiled = /\.(js|js\.map|d\.ts|d\.ts\.map)$/;
function removeStale(dir) {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) removeStale(file);
    else if (!compiled.test(entry.name) && !existsSync(path.join('src', path.relative('dist/src', file)))) rmSync(file);
  }
}
removeStale('dist/src');

cpSync('src', 'dist/src', {
  recursive: true,
  filter: (source) => !source.endsWith('.ts'),
});
