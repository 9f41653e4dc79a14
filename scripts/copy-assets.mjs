// After `tsc -p tsconfig.build.json`: copy what the compiled service reads at run time beside its
// JavaScript (SQL migrations and any other non-TypeScript file under src/), so dist/ runs alone.
import { cpSync } from 'node:fs';

cpSync('src', 'dist/src', {
  recursive: true,
  filter: (source) => !source.endsWith('.ts'),
});
